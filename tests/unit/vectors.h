#ifndef VECTORS_H
#define VECTORS_H
#endif
