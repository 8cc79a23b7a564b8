#ifndef PGMIRROR_APPLY_H
#define PGMIRROR_APPLY_H
#endif
