/* This project's own firmware: it greets, then runs the model the build linked in
   (corev_et_run: load it with ExecuTorch, run its first method, print its outputs)
   and ends with its status. */
#include <stdio.h>

#include "corev_et.h"

int main(void) {
  printf("own_project: running the model\n");
  return corev_et_run();
}
