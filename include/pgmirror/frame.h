/*
 * frame.h: the streaming replication protocol's CopyData frames
 * (PostgreSQL manual, "Streaming Replication Protocol", START_REPLICATION):
 * XLogData ('w') and Primary keepalive ('k') from the server, and the
 * Standby status update ('r') pgmirror sends back. Pure, like the decoder.
 */
#ifndef PGMIRROR_FRAME_H
#define PGMIRROR_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pgmirror/util.h"

#define FRAME_XLOGDATA 'w'
#define FRAME_KEEPALIVE 'k'
#define FRAME_STATUS_UPDATE 'r'

/* Size of an encoded Standby status update. */
#define FRAME_STATUS_UPDATE_SIZE 34

typedef struct Frame {
	char type;             /* FRAME_XLOGDATA or FRAME_KEEPALIVE */
	Lsn wal_start;         /* 'w': start of the data in WAL */
	Lsn wal_end;           /* 'w': server's WAL end; 'k': likewise */
	int64_t send_time;     /* server clock, usecs since 2000-01-01 */
	bool reply_requested;  /* 'k': the server asks for a status update now */
	const uint8_t *data;   /* 'w': the pgoutput message; borrowed */
	size_t len;            /* 'w': bytes in data */
} Frame;

/*
 * Decodes one CopyData payload. On a malformed or unknown frame returns
 * false with a message in err (naming the frame type and byte offset).
 */
bool frame_decode(const uint8_t *buf, size_t len, Frame *out, char *err,
		  size_t errsize) PGM_MUST_CHECK;

/* Encodes a Standby status update into buf; returns its size. */
size_t frame_encode_status(uint8_t buf[FRAME_STATUS_UPDATE_SIZE], Lsn write,
			   Lsn flush, Lsn apply, int64_t now, bool reply);

#endif
