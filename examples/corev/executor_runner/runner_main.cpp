// The executor runner's own main: the runner and nothing else (a firmware of its own
// calls corev_et_run() from its main instead of linking this file).
#include "corev_et.h"

int main() { return corev_et_run(); }
