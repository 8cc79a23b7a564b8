/* pgoutput.c: to be written */
#include "config.h"
