// Firmware has no iostreams. ExecuTorch v1.0's kernels/portable/cpu/util/vectorized_math.h
// includes <iostream>, whose static initializer would pull libstdc++'s stream objects
// and their wide-character locale code (putwc, wcsftime: not in picolibc). Defining
// the initializer here keeps all of that out of the image.
#include <ios>

std::ios_base::Init::Init() {}
std::ios_base::Init::~Init() {}
