/*
 * claim.c: the mirror's claim on its slot, made before the slot.
 *
 * A slot must never be without a mirror that owns it, nor a mirror behind
 * its slot, whenever a power cut or a kill comes. So before a first run,
 * a restart or a rebuild drops or makes the slot, the mirror records its
 * intent (claim_intent()): the state row names the slot, with
 * initial_copy_done = 0 and no position (0/0), committed (synced) before
 * the slot is touched. Then:
 *
 *   cut before the intent:   the old state, the old slot (or none);
 *   after it, before the slot is made: the next run sees the intent, and
 *     makes the slot (dropping one left of it, claim_owns());
 *   after the slot is made, before the claim (the slot's consistent point)
 *     is stored: the same, the slot being its own;
 *   after the claim: a first run that did not finish, resumed or started
 *     over as before (firstrun.c).
 *
 * A live mirror rebuilt after its slot was lost keeps its old tables for
 * readers throughout; only its position goes. The slot a run made is
 * given back (claim_give_back()) when the run fails before the claim is
 * stored, so that a failing disk leaves no slot pinning the source's WAL;
 * where it cannot be dropped, the intent stays with the file, and the
 * next run drops it.
 *
 * An intent cannot prove the slot is its own the way a claim does (by its
 * consistent point): a slot of the same name that another mirror made
 * after this one's creation failed, and before a cut took the failed
 * run's clean-up, would be taken for this mirror's. Two mirrors sharing a
 * slot name on one server is already a mistake pgmirror warns of; that
 * one makes its next run start over, as after a lost slot.
 */
#include "config.h"

#include "replicate_internal.h"

bool claim_is_intent(const MirrorState *st)
{
	return st->present && !st->initial_copy_done && st->confirmed_lsn == LSN_INVALID;
}

bool claim_owns(const MirrorState *st, const SlotInfo *si)
{
	return claim_is_intent(st) && !si->active;
}

bool claim_intent(Run *run, const char *slot, const char *pubs_text)
{
	MirrorState st = {
		.present = true,
		.slot = (char *)slot,
		.publications = (char *)pubs_text,
		.system_identifier = run->sys.systemid,
		.database = run->sys.dbname,
		.confirmed_lsn = LSN_INVALID,
		.last_commit_time = run->state.present ? run->state.last_commit_time : NULL,
		.initial_copy_done = false,
	};

	if (!mirror_begin(run->mirror) || !mirror_write_state(run->mirror, &st) ||
	    !mirror_commit(run->mirror)) {
		log_error("%s", mirror_error(run->mirror));
		mirror_rollback(run->mirror);
		return false;
	}
	return true;
}

bool claim_give_back(Run *run, const char *slot)
{
	/* a new connection: the old one may be lost, or in the snapshot's
	 * transaction */
	session_disconnect(run->session);
	if (session_connect(run->session, &run->opt->conn) &&
	    session_drop_slot(run->session, slot)) {
		log_info("dropped replication slot \"%s\", which this run made and could not "
			 "claim", slot);
		return true;
	}
	/* left connected or not as it is: a service whose source is gone
	 * tries again (replicate.c) */
	log_warning("could not drop replication slot \"%s\", which this run made and could not "
		    "claim (%s); mirror \"%s\" keeps its claim, and its next run drops it", slot,
		    session_error(run->session), run->opt->mirror_path);
	return false;
}
