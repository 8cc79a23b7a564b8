/*
 * lag.c: the mirror's lag behind its source, in bytes and seconds.
 *
 * Bytes: the highest position the server is known to have (an answer to
 * the question of its WAL position, or a message's WAL end) minus the
 * mirror's durable position. A keepalive's WAL end alone is not enough:
 * it is where the walsender is, which stays behind while it decodes WAL
 * the mirror has no part of, and which the mirror then confirms.
 *
 * Seconds: each answer (pos asked at time T) that the durable position
 * reaches proves that the mirror held all the server had at T; the lag is
 * the time since the newest such T. Answers not reached yet wait in a
 * short queue, oldest first.
 */
#include "config.h"

#include "lag.h"

void lag_note_wal_end(Lag *lag, Lsn wal_end)
{
	if (wal_end > lag->server)
		lag->server = wal_end;
}

void lag_note_durable(Lag *lag, Lsn durable)
{
	int n = 0;

	while (n < lag->npending && lag->pending[n].lsn <= durable) {
		if (lag->pending[n].at > lag->synced_at)
			lag->synced_at = lag->pending[n].at;
		n++;
	}
	for (int i = n; i < lag->npending; i++)
		lag->pending[i - n] = lag->pending[i];
	lag->npending -= n;
}

void lag_note_answer(Lag *lag, Lsn pos, int64_t at, Lsn durable)
{
	lag_note_wal_end(lag, pos);
	if (lag->npending == LAG_PENDING)
		lag->npending--; /* the newest gives way */
	lag->pending[lag->npending++] = (LagSample){pos, at};
	lag_note_durable(lag, durable);
}

uint64_t lag_bytes(const Lag *lag, Lsn durable)
{
	return lag->server > durable ? lag->server - durable : 0;
}

double lag_seconds(const Lag *lag, int64_t now)
{
	if (lag->synced_at == 0)
		return -1;
	return now > lag->synced_at ? (double)(now - lag->synced_at) / 1e6 : 0;
}
