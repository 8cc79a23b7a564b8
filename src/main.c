#include "config.h"
#include <stdio.h>
int main(void) { puts("pgmirror: not yet"); return 1; }
