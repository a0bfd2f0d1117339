/*
 * corev_log_vsnprintf: the formatter of ExecuTorch's log messages (see log_format.h for
 * why it is not the C library's). Integers are exact. Floating point is for reading,
 * not for round trips: at most 17 significant digits, from a double scaled by powers of
 * ten (the last digit may differ from glibc's), and %f of magnitudes from 1e40 on is
 * printed as %e.
 */
#include "log_format.h"

#include <stdint.h>

enum {
  FLAG_LEFT = 1,
  FLAG_PLUS = 2,
  FLAG_SPACE = 4,
  FLAG_ALT = 8,
  FLAG_ZERO = 16,
  FLAG_UPPER = 32,
};

enum length { LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_J, LEN_Z, LEN_T, LEN_BIG_L };

typedef struct {
  char* buffer;
  size_t size;
  size_t length; /* of the whole text, written or not */
} sink_t;

static void put(sink_t* sink, char c) {
  if (sink->length + 1 < sink->size) {
    sink->buffer[sink->length] = c;
  }
  sink->length++;
}

static void put_repeated(sink_t* sink, char c, int count) {
  for (; count > 0; count--) {
    put(sink, c);
  }
}

static void put_text(sink_t* sink, const char* text, size_t count) {
  for (size_t i = 0; i < count; i++) {
    put(sink, text[i]);
  }
}

/* A field: padding, prefix (sign, 0x), zeros, body, as the flags and width ask. */
static void put_field(sink_t* sink, int flags, int width, const char* prefix, int prefix_length,
                      int zeros, const char* body, int body_length) {
  int pad = width - (prefix_length + zeros + body_length);
  if (!(flags & FLAG_LEFT) && !(flags & FLAG_ZERO)) {
    put_repeated(sink, ' ', pad);
  }
  put_text(sink, prefix, (size_t)prefix_length);
  if (!(flags & FLAG_LEFT) && (flags & FLAG_ZERO)) {
    put_repeated(sink, '0', pad);
  }
  put_repeated(sink, '0', zeros);
  put_text(sink, body, (size_t)body_length);
  if (flags & FLAG_LEFT) {
    put_repeated(sink, ' ', pad);
  }
}

static int sign_prefix(char* prefix, int negative, int flags) {
  if (negative) {
    prefix[0] = '-';
  } else if (flags & FLAG_PLUS) {
    prefix[0] = '+';
  } else if (flags & FLAG_SPACE) {
    prefix[0] = ' ';
  } else {
    return 0;
  }
  return 1;
}

static void put_integer(sink_t* sink, uintmax_t value, int negative, unsigned base, int flags,
                        int width, int precision) {
  const char* set = (flags & FLAG_UPPER) ? "0123456789ABCDEF" : "0123456789abcdef";
  char reversed[24];
  char body[24];
  int count = 0;
  int is_zero = value == 0;
  if (!(is_zero && precision == 0)) {
    do {
      reversed[count++] = set[value % base];
      value /= base;
    } while (value != 0);
  }
  for (int i = 0; i < count; i++) {
    body[i] = reversed[count - 1 - i];
  }
  char prefix[3];
  int prefix_length = sign_prefix(prefix, negative, flags);
  int zeros = precision > count ? precision - count : 0;
  if ((flags & FLAG_ALT) && base == 16 && !is_zero) {
    prefix[prefix_length++] = '0';
    prefix[prefix_length++] = (flags & FLAG_UPPER) ? 'X' : 'x';
  } else if ((flags & FLAG_ALT) && base == 8 && zeros == 0 && (count == 0 || body[0] != '0')) {
    zeros = 1;
  }
  if (precision >= 0) {
    flags &= ~FLAG_ZERO; /* C: a precision turns the 0 flag off for integers */
  }
  put_field(sink, flags, width, prefix, prefix_length, zeros, body, count);
}

/* 10^n for 0 <= n <= 19, exact. */
static uint64_t power_of_ten(int n) {
  uint64_t p = 1;
  while (n-- > 0) {
    p *= 10;
  }
  return p;
}

/* v > 0, finite, rounded to `count` (1..17) significant digits: the digits' characters
   and the decimal exponent of the first (v ~ d.ddd x 10^exponent). */
static void significant_digits(double v, int count, char* digits, int* exponent) {
  int e = 0;
  while (v >= 1e16) {
    v /= 1e16;
    e += 16;
  }
  while (v >= 10.0) {
    v /= 10.0;
    e++;
  }
  while (v < 1e-16) {
    v *= 1e16;
    e -= 16;
  }
  while (v < 1.0) {
    v *= 10.0;
    e--;
  }
  uint64_t scaled = (uint64_t)(v * (double)power_of_ten(count - 1) + 0.5);
  if (scaled >= power_of_ten(count)) {
    scaled /= 10;
    e++;
  }
  for (int i = count - 1; i >= 0; i--) {
    digits[i] = (char)('0' + scaled % 10);
    scaled /= 10;
  }
  *exponent = e;
}

#define MAX_DIGITS 17
#define FLOAT_BODY 64

/* %e's body: d.ddde+XX; returns its length. */
static int e_body(double v, int precision, int flags, char* body) {
  char digits[MAX_DIGITS];
  int exponent = 0;
  int count = precision + 1 > MAX_DIGITS ? MAX_DIGITS : precision + 1;
  if (v == 0.0) {
    for (int i = 0; i < count; i++) {
      digits[i] = '0';
    }
  } else {
    significant_digits(v, count, digits, &exponent);
  }
  int n = 0;
  body[n++] = digits[0];
  if (precision > 0 || (flags & FLAG_ALT)) {
    body[n++] = '.';
  }
  for (int i = 1; i <= precision && n < FLOAT_BODY - 8; i++) {
    body[n++] = i < count ? digits[i] : '0';
  }
  body[n++] = (flags & FLAG_UPPER) ? 'E' : 'e';
  body[n++] = exponent < 0 ? '-' : '+';
  unsigned magnitude = (unsigned)(exponent < 0 ? -exponent : exponent);
  if (magnitude >= 100) {
    body[n++] = (char)('0' + magnitude / 100);
  }
  body[n++] = (char)('0' + magnitude / 10 % 10);
  body[n++] = (char)('0' + magnitude % 10);
  return n;
}

/* %f's body: ddd.ddd; returns its length (0: too large, print as %e). */
static int f_body(double v, int precision, int flags, char* body) {
  if (v >= 1e40) {
    return 0;
  }
  int exact = precision > MAX_DIGITS ? MAX_DIGITS : precision;
  char digits[FLOAT_BODY];
  int count = 0;
  if (v * (double)power_of_ten(exact) < 1.8e19) {
    double product = v * (double)power_of_ten(exact);
    uint64_t scaled = (uint64_t)product;
    double rest = product - (double)scaled;
    if (rest > 0.5 || (rest == 0.5 && (scaled & 1))) {
      scaled++; /* a tie to even, as C libraries round an exact half */
    }
    char reversed[24];
    do {
      reversed[count++] = (char)('0' + scaled % 10);
      scaled /= 10;
    } while (scaled != 0);
    while (count <= exact) {
      reversed[count++] = '0'; /* at least one digit before the point */
    }
    for (int i = 0; i < count; i++) {
      digits[i] = reversed[count - 1 - i];
    }
  } else {
    /* Too large for the integer route: 17 significant digits, then zeros. */
    int exponent;
    significant_digits(v, MAX_DIGITS, digits, &exponent);
    for (count = MAX_DIGITS; count < exponent + 1 + exact; count++) {
      digits[count] = '0';
    }
  }
  int whole = count - exact;
  int n = 0;
  for (int i = 0; i < whole; i++) {
    body[n++] = digits[i];
  }
  if (precision > 0 || (flags & FLAG_ALT)) {
    body[n++] = '.';
  }
  for (int i = 0; i < precision && n < FLOAT_BODY; i++) {
    body[n++] = i < exact ? digits[whole + i] : '0';
  }
  return n;
}

/* %g: %e or %f by the exponent, trailing zeros dropped unless #. */
static int g_body(double v, int precision, int flags, char* body) {
  int significant = precision == 0 ? 1 : precision;
  int exponent = 0;
  if (v != 0.0) {
    char digits[MAX_DIGITS];
    significant_digits(v, significant > MAX_DIGITS ? MAX_DIGITS : significant, digits,
                       &exponent);
  }
  int n = 0;
  int e_form = !(significant > exponent && exponent >= -4);
  if (!e_form) {
    n = f_body(v, significant - 1 - exponent, flags, body);
  }
  if (n == 0) {
    e_form = 1;
    n = e_body(v, significant - 1, flags, body);
  }
  if (flags & FLAG_ALT) {
    return n;
  }
  /* The mantissa's trailing zeros and point go; the exponent stays. */
  int end = n;
  if (e_form) {
    while (end > 0 && body[end - 1] != 'e' && body[end - 1] != 'E') {
      end--;
    }
    end--;
  }
  int point = -1;
  for (int i = 0; i < end; i++) {
    if (body[i] == '.') {
      point = i;
    }
  }
  if (point < 0) {
    return n;
  }
  int keep = end;
  while (keep > point + 1 && body[keep - 1] == '0') {
    keep--;
  }
  if (keep == point + 1) {
    keep = point;
  }
  for (int i = end; i < n; i++) {
    body[keep + (i - end)] = body[i];
  }
  return keep + (n - end);
}

static void put_float(sink_t* sink, double v, char conversion, int flags, int width,
                      int precision) {
  char prefix[2];
  union {
    double value;
    uint64_t bits;
  } sign = {v};
  int negative = (int)(sign.bits >> 63); /* -0.0 and negative NaNs too */
  int prefix_length = sign_prefix(prefix, negative, flags);
  double magnitude = negative ? -v : v;
  int upper = conversion == 'F' || conversion == 'E' || conversion == 'G';
  if (upper) {
    flags |= FLAG_UPPER;
  }
  if (magnitude != magnitude || magnitude > 1.7976931348623157e308) {
    const char* word = magnitude != magnitude ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
    put_field(sink, flags & ~FLAG_ZERO, width, prefix, prefix_length, 0, word, 3);
    return;
  }
  if (precision < 0) {
    precision = 6;
  }
  char body[FLOAT_BODY];
  int n;
  if (conversion == 'e' || conversion == 'E') {
    n = e_body(magnitude, precision, flags, body);
  } else if (conversion == 'g' || conversion == 'G') {
    n = g_body(magnitude, precision, flags, body);
  } else {
    n = f_body(magnitude, precision, flags, body);
    if (n == 0) {
      n = e_body(magnitude, precision, flags, body);
    }
  }
  put_field(sink, flags, width, prefix, prefix_length, 0, body, n);
}

static intmax_t signed_argument(va_list* args, enum length length) {
  switch (length) {
    case LEN_HH: return (signed char)va_arg(*args, int);
    case LEN_H: return (short)va_arg(*args, int);
    case LEN_L: return va_arg(*args, long);
    case LEN_LL: return va_arg(*args, long long);
    case LEN_J: return va_arg(*args, intmax_t);
    case LEN_Z: return (intmax_t)(ptrdiff_t)va_arg(*args, size_t);
    case LEN_T: return va_arg(*args, ptrdiff_t);
    default: return va_arg(*args, int);
  }
}

static uintmax_t unsigned_argument(va_list* args, enum length length) {
  switch (length) {
    case LEN_HH: return (unsigned char)va_arg(*args, unsigned);
    case LEN_H: return (unsigned short)va_arg(*args, unsigned);
    case LEN_L: return va_arg(*args, unsigned long);
    case LEN_LL: return va_arg(*args, unsigned long long);
    case LEN_J: return va_arg(*args, uintmax_t);
    case LEN_Z: return va_arg(*args, size_t);
    case LEN_T: return (uintmax_t)(size_t)va_arg(*args, ptrdiff_t);
    default: return va_arg(*args, unsigned);
  }
}

int corev_log_vsnprintf(char* buffer, size_t size, const char* format, va_list ap) {
  sink_t sink = {buffer, size, 0};
  va_list args;
  va_copy(args, ap);
  for (const char* p = format; *p != '\0'; p++) {
    if (*p != '%') {
      put(&sink, *p);
      continue;
    }
    const char* start = p++;
    int flags = 0;
    for (;; p++) {
      if (*p == '-') flags |= FLAG_LEFT;
      else if (*p == '+') flags |= FLAG_PLUS;
      else if (*p == ' ') flags |= FLAG_SPACE;
      else if (*p == '#') flags |= FLAG_ALT;
      else if (*p == '0') flags |= FLAG_ZERO;
      else break;
    }
    int width = 0;
    if (*p == '*') {
      width = va_arg(args, int);
      if (width < 0) {
        flags |= FLAG_LEFT;
        width = -width;
      }
      p++;
    } else {
      while (*p >= '0' && *p <= '9') {
        width = width * 10 + (*p++ - '0');
      }
    }
    int precision = -1;
    if (*p == '.') {
      p++;
      precision = 0;
      if (*p == '*') {
        precision = va_arg(args, int);
        p++;
      } else {
        while (*p >= '0' && *p <= '9') {
          precision = precision * 10 + (*p++ - '0');
        }
      }
    }
    if (flags & FLAG_LEFT) {
      flags &= ~FLAG_ZERO;
    }
    enum length length = LEN_NONE;
    if (*p == 'h') {
      length = p[1] == 'h' ? LEN_HH : LEN_H;
      p += length == LEN_HH ? 2 : 1;
    } else if (*p == 'l') {
      length = p[1] == 'l' ? LEN_LL : LEN_L;
      p += length == LEN_LL ? 2 : 1;
    } else if (*p == 'j') {
      length = LEN_J, p++;
    } else if (*p == 'z') {
      length = LEN_Z, p++;
    } else if (*p == 't') {
      length = LEN_T, p++;
    } else if (*p == 'L') {
      length = LEN_BIG_L, p++;
    }
    switch (*p) {
      case 'd':
      case 'i': {
        intmax_t value = signed_argument(&args, length);
        uintmax_t magnitude = value < 0 ? (uintmax_t)0 - (uintmax_t)value : (uintmax_t)value;
        put_integer(&sink, magnitude, value < 0, 10, flags, width, precision);
        break;
      }
      case 'u':
      case 'o':
      case 'x':
      case 'X': {
        uintmax_t value = unsigned_argument(&args, length);
        unsigned base = *p == 'u' ? 10 : *p == 'o' ? 8 : 16;
        put_integer(&sink, value, 0, base, (flags & ~(FLAG_PLUS | FLAG_SPACE)) |
                    (*p == 'X' ? FLAG_UPPER : 0), width, precision);
        break;
      }
      case 'p': {
        uintptr_t value = (uintptr_t)va_arg(args, void*);
        if (value == 0) {
          /* # gives a zero no 0x; a null pointer is still an address */
          put_field(&sink, flags & FLAG_LEFT, width, "", 0, 0, "0x0", 3);
        } else {
          put_integer(&sink, value, 0, 16, FLAG_ALT | (flags & FLAG_LEFT), width, -1);
        }
        break;
      }
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
        put_float(&sink, length == LEN_BIG_L ? (double)va_arg(args, long double)
                                             : va_arg(args, double),
                  *p, flags, width, precision);
        break;
      case 'c': {
        char c = (char)va_arg(args, int);
        put_field(&sink, flags & ~FLAG_ZERO, width, "", 0, 0, &c, 1);
        break;
      }
      case 's': {
        const char* text = va_arg(args, const char*);
        if (text == NULL) {
          text = "(null)";
        }
        int count = 0;
        while ((precision < 0 || count < precision) && text[count] != '\0') {
          count++;
        }
        put_field(&sink, flags & ~FLAG_ZERO, width, "", 0, 0, text, count);
        break;
      }
      case 'n':
        (void)va_arg(args, void*); /* written counts are not for log messages */
        break;
      case '%':
        put(&sink, '%');
        break;
      default:
        /* Not a conversion: the text as it stands (and the end of the format). */
        put_text(&sink, start, (size_t)(p - start) + (*p != '\0'));
        if (*p == '\0') {
          p--;
        }
        break;
    }
  }
  va_end(args);
  if (size > 0) {
    buffer[sink.length < size ? sink.length : size - 1] = '\0';
  }
  return sink.length > 0x7fffffff ? 0x7fffffff : (int)sink.length;
}
