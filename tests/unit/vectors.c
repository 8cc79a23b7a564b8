#include "vectors.h"
