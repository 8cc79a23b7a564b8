/*
 * durable.h: making a file's contents and its name survive a power cut.
 *
 * A write, a create, a rename or a removal lives in the kernel's cache
 * until it is synced: a power cut throws away whatever was not, file by
 * file and name by name (a file's data with fsync() on the file, its name
 * with fsync() on its directory). These helpers do the syncs in the order
 * a power cut asks for: a file synced before it takes a name, the
 * directory synced after the name changed. Each returns false with errno
 * set when a step failed; a file that is not there is no error where the
 * comment says so.
 */
#ifndef PGMIRROR_DURABLE_H
#define PGMIRROR_DURABLE_H

#include <stdbool.h>

/* Syncs the directory that holds path (its names: creates, renames and
 * removals in it before now survive a power cut). */
bool durable_sync_dir(const char *path);

/* Syncs the data of the file at path; a missing file is no error. Opens
 * and closes a descriptor of its own: never while a connection of this
 * process has the file open (closing it would drop SQLite's POSIX locks). */
bool durable_sync_file(const char *path);

/* Renames from to to, from's data synced first; a missing from is no
 * error (*moved false). The directory is not synced: the caller does it
 * once after a group of renames (durable_sync_dir()). */
bool durable_rename(const char *from, const char *to, bool *moved);

/* Removes path; a missing one is no error. The directory is not synced. */
bool durable_unlink(const char *path);

#endif
