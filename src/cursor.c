/* cursor.c: to be written */
#include "config.h"
