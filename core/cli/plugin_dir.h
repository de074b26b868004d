/* SPDX-License-Identifier: MIT */
/*
 * Where the source plugins are loaded from when nothing names a directory
 * (--plugin-dir, WHYSLOW_PLUGIN_DIR, [core] plugin_dir): the install tree the
 * executable sits in. A tree moved elsewhere (a wheel installed into a venv,
 * a tarball unpacked under /opt) finds its own plugins without a variable.
 */
#ifndef WS_PLUGIN_DIR_H
#define WS_PLUGIN_DIR_H

/*
 * The plugin directory at the place relative to the running executable that
 * the build's plugin directory has relative to its bindir, if it exists;
 * else the one compiled in. Either is opened through ws_trusted_open when
 * plugins are loaded, so one root cannot trust is refused then, and named.
 * A static string.
 */
const char *ws_plugin_dir_default(void);

/* --plugin-dir if given, else WHYSLOW_PLUGIN_DIR if set, else ws_plugin_dir_default(). */
const char *ws_plugin_dir_pick(const char *given);

#endif
