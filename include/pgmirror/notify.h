/*
 * notify.h: systemd's notify protocol (sd_notify(3)) and its watchdog, for
 * a service (Type=notify). Without NOTIFY_SOCKET in the environment every
 * function does nothing.
 */
#ifndef PGMIRROR_NOTIFY_H
#define PGMIRROR_NOTIFY_H

#include "pgmirror/util.h"

/* Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID, once, at start. */
void notify_init(void);

/* The run caught up with the source: READY=1, the first time only. */
void notify_ready(void);

/* STATUS=, one line of what pgmirror does; sent only when it changed. */
void notify_status(const char *fmt, ...) PGM_PRINTF(1, 2);

/*
 * The run made progress (the stream's loop turned, a copy took rows):
 * WATCHDOG=1 at most every quarter of WATCHDOG_USEC (so at least every
 * half while progress goes on), and, before READY=1, EXTEND_TIMEOUT_USEC
 * so that a long first copy keeps the start alive while one that hangs
 * does not. Cheap enough for every batch of rows.
 */
void notify_alive(void);

/* wait_ms, or less: how long a loop that calls notify_alive() may wait
 * for input without missing a WATCHDOG=1. */
int notify_wait_ms(int wait_ms);

/* STOPPING=1; async-signal-safe (called from the SIGTERM handler). */
void notify_stopping(void);

#endif
