/*
 * mirror_holder.c: who holds a mirror's writer lock (an flock() on the
 * file, mirror.c), so that "in use" can name it: the process, from the
 * kernel's list of locks (/proc/locks: "1: FLOCK  ADVISORY  WRITE PID
 * MAJ:MIN:INODE 0 EOF", device numbers in hex), and the systemd unit it
 * runs in, from its cgroup (/proc/PID/cgroup: ".../pgmirror@shop.service").
 * Where /proc cannot tell (another system, another mount namespace), the
 * holder is simply not named.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "mirror_internal.h"

/* The pgmirror unit ("pgmirror....service", a component of its cgroup's
 * path) process pid runs in, or NULL (malloc'd): not any unit, since a
 * process started from a login runs under "user@UID.service". */
static char *unit_of(long pid)
{
	char name[64], line[512], *unit = NULL, *save;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%ld/cgroup", pid);
	if ((f = fopen(name, "r")) == NULL)
		return NULL;
	while (unit == NULL && fgets(line, sizeof(line), f) != NULL) {
		for (char *c = strtok_r(line, "/\n", &save); c != NULL && unit == NULL;
		     c = strtok_r(NULL, "/\n", &save)) {
			size_t n = strlen(c);

			if (strncmp(c, "pgmirror", 8) == 0 && n > 8 &&
			    strcmp(c + n - 8, ".service") == 0)
				unit = xstrdup(c);
		}
	}
	fclose(f);
	return unit;
}

bool mirror_holder(const char *path, long *pid, char **unit)
{
	struct stat st;
	char line[256];
	bool found = false;
	FILE *f;

	*pid = 0;
	*unit = NULL;
	if (stat(path, &st) != 0 || (f = fopen("/proc/locks", "r")) == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		unsigned maj, min;
		unsigned long long ino;

		found = strstr(line, "->") == NULL &&
			sscanf(line, "%*s FLOCK %*s %*s %ld %x:%x:%llu", pid, &maj, &min, &ino) == 4 &&
			maj == major(st.st_dev) && min == minor(st.st_dev) &&
			ino == (unsigned long long)st.st_ino;
	}
	fclose(f);
	if (found)
		*unit = unit_of(*pid);
	else
		*pid = 0;
	return found;
}
