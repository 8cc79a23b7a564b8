/*
 * frame.c: the CopyData payloads of a START_REPLICATION stream
 * (PostgreSQL manual, "Streaming Replication Protocol"):
 *
 *	XLogData          'w' Int64 start  Int64 end  Int64 send time  Byten data
 *	Primary keepalive 'k' Int64 end    Int64 send time  Byte1 reply requested
 *	Status update     'r' Int64 write  Int64 flush  Int64 apply
 *	                      Int64 client time  Byte1 reply requested
 *
 * All integers big-endian. An XLogData frame's data is the rest of the
 * payload: one pgoutput message. A keepalive is exactly 18 bytes.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pgmirror/cursor.h"
#include "pgmirror/frame.h"

static const char *frame_type_name(int type)
{
	switch (type) {
	case FRAME_XLOGDATA: return "XLogData";
	case FRAME_KEEPALIVE: return "primary keepalive";
	}
	return "unknown";
}

static PGM_PRINTF(3, 4) bool frame_error(char *err, size_t errsize,
					 const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errsize == 0)
		return false;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return false;
}

static bool frame_truncated(int type, const Cursor *c, char *err,
			    size_t errsize)
{
	return frame_error(err, errsize,
			   "malformed %s frame: truncated at byte offset %zu",
			   frame_type_name(type), c->pos);
}

static bool frame_read_xlogdata(Cursor *c, Frame *out, char *err,
				size_t errsize)
{
	if (!cursor_get_u64(c, &out->wal_start) ||
	    !cursor_get_u64(c, &out->wal_end) ||
	    !cursor_get_i64(c, &out->send_time))
		return frame_truncated(FRAME_XLOGDATA, c, err, errsize);
	out->len = cursor_left(c);
	if (!cursor_get_bytes(c, out->len, &out->data))
		return frame_truncated(FRAME_XLOGDATA, c, err, errsize);
	return true;
}

static bool frame_read_keepalive(Cursor *c, Frame *out, char *err,
				 size_t errsize)
{
	uint8_t reply;

	if (!cursor_get_u64(c, &out->wal_end) ||
	    !cursor_get_i64(c, &out->send_time) ||
	    !cursor_get_u8(c, &reply))
		return frame_truncated(FRAME_KEEPALIVE, c, err, errsize);
	if (cursor_left(c) != 0)
		return frame_error(err, errsize,
				   "malformed %s frame: %zu trailing byte%s at byte offset %zu",
				   frame_type_name(FRAME_KEEPALIVE),
				   cursor_left(c), cursor_left(c) == 1 ? "" : "s",
				   c->pos);
	out->reply_requested = reply != 0;
	return true;
}

bool frame_decode(const uint8_t *buf, size_t len, Frame *out, char *err,
		  size_t errsize)
{
	Cursor c;
	uint8_t type;

	cursor_init(&c, buf, len);
	memset(out, 0, sizeof *out);
	if (!cursor_get_u8(&c, &type))
		return frame_error(err, errsize,
				   "empty frame at byte offset 0");
	out->type = (char) type;
	switch (type) {
	case FRAME_XLOGDATA:
		return frame_read_xlogdata(&c, out, err, errsize);
	case FRAME_KEEPALIVE:
		return frame_read_keepalive(&c, out, err, errsize);
	default:
		return frame_error(err, errsize,
				   "unknown frame type 0x%02x at byte offset 0",
				   type);
	}
}

static uint8_t *frame_put_u64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 7; i >= 0; i--)
		*p++ = (uint8_t) (v >> (i * 8));
	return p;
}

size_t frame_encode_status(uint8_t buf[FRAME_STATUS_UPDATE_SIZE], Lsn write,
			   Lsn flush, Lsn apply, int64_t now, bool reply)
{
	uint8_t *p = buf;

	*p++ = FRAME_STATUS_UPDATE;
	p = frame_put_u64(p, write);
	p = frame_put_u64(p, flush);
	p = frame_put_u64(p, apply);
	p = frame_put_u64(p, (uint64_t) now);
	*p++ = reply ? 1 : 0;
	return (size_t) (p - buf);
}
