"""--status --prometheus: the mirror's state in Prometheus' text format,
from the file alone. promtool (Debian's prometheus) accepts it after a good
run and after a failed one; every sample is labelled with the slot; each
metric has its # HELP and # TYPE; the figures are the ones --status --json
shows (times as Unix seconds, the LSN as a number, 0 for a time not
reached); a table name with a quote, a backslash and a newline is escaped.
pgmirror-textfile writes the same into a directory for node_exporter, whole
or not at all (a failure keeps the old file, and no temporary file stays).
The example alert rules, run by promtool test rules on samples taken from
these outputs: a failed run, a check that found damage, a waiting table and
a mirror not synced for hours fire their alert; a good run fires none."""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import check, fail  # noqa: E402

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
WANTED = ["pgmirror_info", "pgmirror_last_sync_timestamp_seconds", "pgmirror_lag_seconds",
          "pgmirror_lag_bytes", "pgmirror_confirmed_lsn",
          "pgmirror_last_commit_timestamp_seconds", "pgmirror_table_rows", "pgmirror_tables",
          "pgmirror_last_error_timestamp_seconds", "pgmirror_last_check_timestamp_seconds",
          "pgmirror_last_check_ok", "pgmirror_last_rebuild_timestamp_seconds"]
WEIRD = 'we"ird\\na\nme'
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_]\w*="(?:[^"\\\n]|\\[\\"n])*",?)*)\} (\S+)$')
LABEL = re.compile(r'([a-zA-Z_]\w*)="((?:[^"\\\n]|\\[\\"n])*)"')


def unescape(v):
    return re.sub(r'\\([\\"n])', lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def prometheus(ctx, path):
    """--status --prometheus, checked by promtool and parsed: {(name,
    frozenset(labels)): value}, the raw text."""
    rc, out, err = ctx.run(["--status", "--prometheus", path])
    check(rc == 0, "--status --prometheus exited %d: %s" % (rc, err))
    p = subprocess.run(["promtool", "check", "metrics"], input=out.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    harness.log("promtool check metrics: exit %d %s" % (p.returncode, p.stdout.decode()))
    check(p.returncode == 0, "promtool check metrics refused it:\n%s\n%s"
          % (p.stdout.decode(), out))
    samples, helped, typed = {}, set(), set()
    for line in out.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
        elif line.startswith("# TYPE "):
            typed.add(line.split()[2])
            check(line.split()[3] == "gauge", "not a gauge: %r" % line)
        else:
            m = SAMPLE.match(line)
            check(m, "not a sample line: %r" % line)
            labels = {k: unescape(v) for k, v in LABEL.findall(m.group(2))}
            check(m.group(1) in helped and m.group(1) in typed,
                  "%s has no # HELP or # TYPE before it" % m.group(1))
            samples[(m.group(1), frozenset(labels.items()))] = float(m.group(3))
    return samples, out


def value(samples, slot, name, **labels):
    key = (name, frozenset(dict(labels, slot=slot).items()))
    check(key in samples, "no sample %s{slot=%r,%s}" % (name, slot, labels))
    return samples[key]


def unix(text):
    p = subprocess.run(["date", "-u", "-d", text + "Z", "+%s.%N"], stdout=subprocess.PIPE,
                       check=True)
    return float(p.stdout.decode())


def status_json(ctx, path):
    rc, out, err = ctx.run(["--status", "--json", path])
    check(rc == 0, "--status --json exited %d: %s" % (rc, err))
    return json.loads(out)


def agrees(ctx, path, slot, samples):
    """The samples say what --status --json says."""
    st = status_json(ctx, path)
    for name, key in (("pgmirror_last_sync_timestamp_seconds", "last_sync_time"),
                      ("pgmirror_last_commit_timestamp_seconds", "last_commit_time"),
                      ("pgmirror_last_error_timestamp_seconds", "last_error_time"),
                      ("pgmirror_last_check_timestamp_seconds", "last_check_time"),
                      ("pgmirror_last_rebuild_timestamp_seconds", "last_rebuild_time")):
        want = unix(st[key]) if st[key] else 0.0
        got = value(samples, slot, name)
        check(abs(got - want) < 1e-3, "%s is %r, --json's %s %r" % (name, got, key, st[key]))
    hi, lo = st["confirmed_lsn"].split("/")
    check(value(samples, slot, "pgmirror_confirmed_lsn") == (int(hi, 16) << 32) + int(lo, 16),
          "pgmirror_confirmed_lsn is not %s" % st["confirmed_lsn"])
    if st["last_sync_lag_bytes"] is not None:
        check(value(samples, slot, "pgmirror_lag_bytes") == st["last_sync_lag_bytes"] and
              abs(value(samples, slot, "pgmirror_lag_seconds") -
                  st["last_sync_lag_seconds"]) < 1e-3, "the lag differs from --json's")
    for t in st["tables"]:
        check(value(samples, slot, "pgmirror_table_rows", table=t["name"]) == t["rows"],
              "rows of %r differ" % t["name"])
    check(value(samples, slot, "pgmirror_tables", state="synced") == len(st["tables"]),
          "pgmirror_tables{state=\"synced\"} is not %d" % len(st["tables"]))
    check(value(samples, slot, "pgmirror_tables", state="waiting") == 0, "a table waits")
    return st


def series(samples, instance, overrides=None):
    """promtool's input_series for samples, 200 minutes of one value each."""
    out = []
    for (name, labels), v in sorted(samples.items(), key=lambda kv: str(kv[0])):
        v = (overrides or {}).get(name, v)
        if v != v:  # NaN
            continue
        lab = ",".join('%s=%s' % (k, json.dumps(val)) for k, val in
                       sorted(dict(labels, instance=instance).items()))
        out.append({"series": "%s{%s}" % (name, lab), "values": "%r+0x200" % v})
    return out


def test(ctx):
    ctx.sql('CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 3);'
            'CREATE TABLE "%s" (id int PRIMARY KEY); INSERT INTO "%s" VALUES (1);'
            'CREATE PUBLICATION pub FOR TABLE t, "%s"'
            % ((WEIRD.replace('"', '""'),) * 3))
    path, slot = os.path.join(ctx.tmpdir, "m.db"), ctx.slot()
    _, _, err = ctx.once(path, slot, "pub", "-v")
    check("copied 1 row of" in err and "copied 3 rows of" in err,
          "the copy's lines do not count right:\n" + err)
    good, good_text = prometheus(ctx, path)
    names = {n for n, _ in good}
    for n in WANTED:
        check(n in names, "--status --prometheus has no %s:\n%s" % (n, good_text))
    for n, labels in good:
        check(dict(labels).get("slot") == slot, "%s is not labelled slot=%r" % (n, slot))
    version = ctx.run(["--version"])[1].split()[1]
    check(value(good, slot, "pgmirror_info", version=version) == 1, "pgmirror_info")
    check(value(good, slot, "pgmirror_table_rows", table=WEIRD) == 1, "the escaped name")
    check(value(good, slot, "pgmirror_table_rows", table="t") == 3, "t's rows")
    st = agrees(ctx, path, slot, good)
    check(st["last_error"] is None and st["last_sync_time"], "a good run: %r" % st)
    check(value(good, slot, "pgmirror_last_error_timestamp_seconds") == 0, "an error time")
    harness.log("after a good run:\n" + good_text)

    rc, _, err = ctx.run(["--status", "--json", "--prometheus", path])
    check(rc == 2 and "do not go together" in err, "--json --prometheus: %d %s" % (rc, err))
    rc, _, err = ctx.run(["--prometheus", path])
    check(rc == 2 and "only with --status" in err, "--prometheus alone: %d %s" % (rc, err))

    # a run that fails (nothing listens on the port) leaves its error
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    rc, _, err = ctx.run(["-d", "host=127.0.0.1 port=%d dbname=x connect_timeout=5"
                          % dead.getsockname()[1], "-S", slot, "-P", "pub", "--once", path])
    dead.close()
    check(rc == 1, "--once against nothing: exit %d %s" % (rc, err))
    bad, bad_text = prometheus(ctx, path)
    st = agrees(ctx, path, slot, bad)
    check(st["last_error"] and value(bad, slot, "pgmirror_last_error_timestamp_seconds") > 0,
          "the failure is not in the metrics:\n%s" % bad_text)
    harness.log("after a failed run:\n" + bad_text)

    # pgmirror-textfile NAME, with the binary under test first on PATH
    bindir, conf, out = (tempfile.mkdtemp(dir=ctx.tmpdir) for _ in range(3))
    os.symlink(ctx.binary, os.path.join(bindir, "pgmirror"))
    with open(os.path.join(conf, "shop.conf"), "w") as f:
        f.write("MIRROR=%s\nSLOT=%s\nPUBLICATIONS=pub\nOPTIONS=\n" % (path, slot))
    env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"], PGMIRROR_CONF_DIR=conf,
               PGMIRROR_TEXTFILE_DIR=out)
    script = os.path.join(TOP, "metrics", "pgmirror-textfile")
    p = subprocess.run([script, "shop"], env=env, stderr=subprocess.PIPE)
    check(p.returncode == 0, "pgmirror-textfile exited %d: %s" % (p.returncode, p.stderr))
    check(os.listdir(out) == ["pgmirror-shop.prom"], "in the directory: %r" % os.listdir(out))
    with open(os.path.join(out, "pgmirror-shop.prom")) as f:
        check(f.read() == bad_text, "pgmirror-textfile wrote something else")
    with open(os.path.join(conf, "shop.conf"), "w") as f:
        f.write("MIRROR=%s\n" % os.path.join(ctx.tmpdir, "missing.db"))
    p = subprocess.run([script, "shop"], env=env, stderr=subprocess.PIPE)
    check(p.returncode == 1 and b"does not exist" in p.stderr,
          "pgmirror-textfile on a missing mirror: exit %d %s" % (p.returncode, p.stderr))
    check(os.listdir(out) == ["pgmirror-shop.prom"], "after a failure: %r" % os.listdir(out))
    with open(os.path.join(out, "pgmirror-shop.prom")) as f:
        check(f.read() == bad_text, "a failure changed the file")

    # the example alert rules on samples of these outputs
    rules = os.path.join(TOP, "metrics", "pgmirror-alerts.yml")
    inputs = (series(good, "good") + series(bad, "failed") +
              series(good, "damaged", {"pgmirror_last_check_ok": 0.0}) +
              series(good, "never", {"pgmirror_last_sync_timestamp_seconds": 0.0}))
    inputs.append({"series": 'pgmirror_tables{instance="waits",slot="%s",state="waiting"}'
                   % slot, "values": "1+0x200"})
    summary = {
        "PgmirrorLastRunFailed": "the last pgmirror run of mirror %s on %s failed",
        "PgmirrorCheckFailed": "the integrity check found mirror %s on %s damaged",
        "PgmirrorTableWaiting": "1 table(s) of mirror %s on %s wait",
        "PgmirrorNotSynced": "mirror %s on %s not in sync for 2 hours"}
    description = {
        "PgmirrorLastRunFailed": "pgmirror --status shows last_error; a run that succeeds "
                                 "clears it.",
        "PgmirrorCheckFailed": "pgmirror sets a damaged file aside and rebuilds it; see "
                               "last_check_result in pgmirror --status.",
        "PgmirrorTableWaiting": "pgmirror --status names each waiting table and why.",
        "PgmirrorNotSynced": "Run pgmirror --status on the device: last_error says what "
                             "went wrong."}

    def alert(name, instance, when="20m", severity="warning", **more):
        return {"eval_time": when, "alertname": name, "exp_alerts": [] if instance is None
                else [{"exp_labels": dict(more, slot=slot, instance=instance,
                                          severity=severity),
                       "exp_annotations": {"summary": summary[name] % (slot, instance),
                                           "description": description[name]}}]}
    expect = [alert("PgmirrorLastRunFailed", "failed"),
              alert("PgmirrorCheckFailed", "damaged", severity="critical"),
              alert("PgmirrorTableWaiting", "waits", state="waiting"),
              # time() counts from 1970 here: the real sync times are in its
              # future, and "never" is 2 hours old only after 2 hours
              alert("PgmirrorNotSynced", None),
              alert("PgmirrorNotSynced", "never", when="3h")]
    test_file = os.path.join(ctx.tmpdir, "rules_test.yml")
    with open(test_file, "w") as f:
        # JSON is YAML
        json.dump({"rule_files": [os.path.abspath(rules)], "evaluation_interval": "1m",
                   "tests": [{"interval": "1m", "input_series": inputs,
                              "alert_rule_test": expect}]}, f, indent=1)
    p = subprocess.run(["promtool", "test", "rules", test_file], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    harness.log("promtool test rules: exit %d\n%s" % (p.returncode, p.stdout.decode()))
    check(p.returncode == 0, "promtool test rules:\n%s" % p.stdout.decode())


harness.main(test)
