/* mirror.c: to be written */
#include "config.h"
