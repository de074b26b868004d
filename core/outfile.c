// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"

int ws_outfile_open(struct ws_outfile *o, const char *path)
{
	struct stat st;
	int fd, err;

	memset(o, 0, sizeof(*o));
	o->path = path;
	if (!path || !strcmp(path, WS_OUTFILE_STDERR)) {
		o->f = path ? stderr : stdout;
		o->path = NULL;
		return 0;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->direct = true;
		o->f = fopen(path, "we");
		if (o->f)
			return 0;
		fd = -1;
	} else {
		snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.XXXXXX", path);
		fd = mkstemp(o->tmp);
		if (fd >= 0) {
			fchmod(fd, 0644);
			o->f = fdopen(fd, "w");
			if (o->f)
				return 0;
		}
	}
	err = -errno;
	fprintf(stderr, "whyslow: cannot write %s: %s; choose another output path\n", path,
		strerror(errno));
	if (fd >= 0) {
		close(fd);
		unlink(o->tmp);
	}
	return err;
}

int ws_outfile_close(struct ws_outfile *o, bool keep)
{
	int err = 0;

	if (!o->f)
		return 0;
	if (fflush(o->f) == EOF || ferror(o->f))
		err = errno ? -errno : -EIO;
	if (!o->path)
		return err;
	if (!o->direct && !err && fsync(fileno(o->f)))
		err = -errno;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	if (!o->direct) {
		if (keep && !err && rename(o->tmp, o->path))
			err = -errno;
		if (!keep || err)
			unlink(o->tmp);
	}
	if (keep && err)
		fprintf(stderr, "whyslow: cannot write %s: %s\n", o->path, strerror(-err));
	return err;
}
