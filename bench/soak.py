#!/usr/bin/env python3
"""Soak and load: both servers (release builds, fresh SQLite files, loopback
only) under mixed traffic for a bounded time, then a verdict.

- Personal API (demo data): readers list accounts, pages and full lists of
  transactions and balances; an importer uploads a year of monthly-sized
  OFX statements (60 of them, 20 entries each) again and again, as a
  person re-importing their files would: the first round stores, later
  rounds find everything already there.
- Platform API: two apps' users read with their access token and rotate
  their refresh token every 25 reads (a client refreshing often).

Reports requests and errors per kind and each server's RSS after warm-up,
each minute and at the end. Fails (exit 1) on any error, an RSS growth of
10% or more from the baseline, or RSS still climbing over the last half of
the run (5% or more: a leak climbs to the end; a cache filling up
flattens). The baseline is taken after a warm-up of three minutes. Every loop stops at the deadline or at --max-requests, whichever
comes first. Standard library only.

    python3 bench/soak.py                  # 10 minutes
    python3 bench/soak.py --seconds 60     # a quick look
"""

import argparse
import base64
import http.client
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent
RELEASE = ROOT / "target" / "release"
# Distinct statements the importer cycles through.
STATEMENTS = 60
# Bearer reads between two refreshes of a Platform user's token.
READS_PER_REFRESH = 25


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = {}
        self.errors = {}
        self.samples = []

    def count(self, kind, ok, detail=""):
        with self.lock:
            self.requests[kind] = self.requests.get(kind, 0) + 1
            if not ok:
                self.errors[kind] = self.errors.get(kind, 0) + 1
                if len(self.samples) < 10:
                    self.samples.append(f"{kind}: {detail}")

    def total(self):
        with self.lock:
            return sum(self.requests.values())


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def start_server(binary, workdir, extra_env):
    env = dict(os.environ)
    env.update(
        {
            "TRIBUTARY_DATABASE_URL": f"sqlite://{workdir}/tributary.db",
            "TRIBUTARY_BIND": "127.0.0.1:0",
            "RUST_LOG": "warn",
        }
    )
    env.update(extra_env)
    process = subprocess.Popen(
        [str(RELEASE / binary)],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=open(workdir / "server.log", "w"),
        text=True,
    )
    lines = []
    for line in process.stdout:
        lines.append(line)
        text = "".join(lines)
        # The Personal API prints its demo key after the address.
        if "listening on" in text and (binary != "personal-api" or "Try:" in text):
            break
    url = re.search(r"listening on (http://\S+)", "".join(lines)).group(1)
    key = re.search(r"Demo API key \(shown only now\): (\S+)", "".join(lines))
    threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
    return process, url, key.group(1) if key else None


class Client:
    """One keep-alive connection."""

    def __init__(self, url):
        parsed = urllib.parse.urlparse(url)
        self.host, self.port = parsed.hostname, parsed.port
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)

    def request(self, method, path, body=None, headers=None):
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=body, headers=headers or {})
                response = self.conn.getresponse()
                return response.status, response.read()
            except (http.client.HTTPException, ConnectionError):
                # The server closed an idle keep-alive connection: reconnect once.
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
                if attempt:
                    raise


def personal_reader(url, key, stats, until, cap):
    client = Client(url)
    headers = {"x-api-key": key}
    status, body = client.request("GET", "/api/v1/accounts", headers=headers)
    accounts = [a["id"] for a in json.loads(body)["accounts"]]
    n = 0
    while time.time() < until and stats.total() < cap:
        account = accounts[n % len(accounts)]
        for kind, path in [
            ("accounts", "/api/v1/accounts"),
            ("page", f"/api/v1/accounts/{account}/transactions?limit=100"),
            ("full list", f"/api/v1/accounts/{account}/transactions?include_pending=true"),
            ("balance", f"/api/v1/accounts/{account}/balance"),
        ]:
            status, body = client.request("GET", path, headers=headers)
            stats.count(kind, status == 200, f"{status} {body[:200]!r}")
        n += 1


def statement(round_number):
    records = "".join(
        f"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20260{1 + i % 9}{10 + i % 18}<TRNAMT>-{i}.{round_number % 100:02d}"
        f"<FITID>soak-{round_number}-{i}<NAME>Soak shop {i}</STMTTRN>"
        for i in range(1, 21)
    )
    return (
        "OFXHEADER:100\nDATA:OFXSGML\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>EUR"
        "<BANKACCTFROM><ACCTID>SOAK0001</BANKACCTFROM>"
        f"<BANKTRANLIST>{records}</BANKTRANLIST>"
        "<LEDGERBAL><BALAMT>100.00<DTASOF>20260930</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
    ).encode()


def personal_importer(url, key, stats, until, cap):
    client = Client(url)
    n = 0
    while time.time() < until and stats.total() < cap:
        boundary = f"soak{n}"
        number = n % STATEMENTS
        body = (
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"soak{number}.ofx\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode() + statement(number) + f"\r\n--{boundary}--\r\n".encode()
        headers = {"x-api-key": key, "Content-Type": f"multipart/form-data; boundary={boundary}"}
        status, answer = client.request("POST", "/api/v1/imports", body=body, headers=headers)
        stats.count("import", status == 200, f"{status} {answer[:200]!r}")
        n += 1


def platform_refresher(url, client_id, secret, email, stats, until, cap):
    client = Client(url)
    basic = "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    status, body = client.request(
        "POST",
        "/api/platform/v1/users",
        body=json.dumps({"email": email}),
        headers={"Authorization": basic, "Content-Type": "application/json"},
    )
    stats.count("register", status in (200, 201), f"{status} {body[:200]!r}")
    tokens = json.loads(body)
    refresh = tokens["refresh_token"]
    while time.time() < until and stats.total() < cap:
        form = urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": refresh})
        status, body = client.request(
            "POST",
            "/api/platform/oauth/token",
            body=form,
            headers={"Authorization": basic, "Content-Type": "application/x-www-form-urlencoded"},
        )
        stats.count("refresh", status == 200, f"{status} {body[:200]!r}")
        if status != 200:
            return
        answer = json.loads(body)
        refresh = answer["refresh_token"]
        for _ in range(READS_PER_REFRESH):
            status, body = client.request(
                "GET", "/api/platform/v1/accounts", headers={"Authorization": f"Bearer {answer['access_token']}"}
            )
            stats.count("bearer read", status == 200, f"{status} {body[:200]!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=600)
    parser.add_argument("--warmup", type=int, default=180, help="seconds before the RSS baseline")
    parser.add_argument("--max-requests", type=int, default=20_000_000)
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        subprocess.run(
            ["cargo", "build", "--release", "-p", "personal-api", "-p", "platform-api", "-p", "tributary"],
            cwd=ROOT,
            check=True,
        )
    stats = Stats()
    with tempfile.TemporaryDirectory() as tmp:
        personal_dir, platform_dir = pathlib.Path(tmp, "personal"), pathlib.Path(tmp, "platform")
        personal_dir.mkdir()
        platform_dir.mkdir()
        personal, personal_url, key = start_server("personal-api", personal_dir, {})
        platform, platform_url, _ = start_server("platform-api", platform_dir, {})
        try:
            created = subprocess.run(
                [str(RELEASE / "tributary"), "apps", "create", "--name", "Soak", "--redirect-uri", "https://soak.example/cb"],
                env=dict(os.environ, TRIBUTARY_DATABASE_URL=f"sqlite://{platform_dir}/tributary.db"),
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            client_id = re.search(r"client_id:\s+(\S+)", created).group(1)
            secret = re.search(r"client_secret:\s+(\S+)", created).group(1)
            until = time.time() + args.seconds
            workers = [threading.Thread(target=personal_reader, args=(personal_url, key, stats, until, args.max_requests)) for _ in range(3)]
            workers.append(threading.Thread(target=personal_importer, args=(personal_url, key, stats, until, args.max_requests)))
            workers += [
                threading.Thread(
                    target=platform_refresher,
                    args=(platform_url, client_id, secret, f"soak{n}@example.com", stats, until, args.max_requests),
                )
                for n in range(2)
            ]
            for worker in workers:
                worker.start()
            time.sleep(min(args.warmup, args.seconds / 2))
            baseline = {"personal-api": rss_kib(personal.pid), "platform-api": rss_kib(platform.pid)}
            # RSS each minute after the baseline: a leak climbs to the end,
            # a cache filling up flattens.
            series = {name: [baseline[name]] for name in baseline}
            while any(worker.is_alive() for worker in workers):
                minute_ends = time.time() + 60
                for worker in workers:
                    worker.join(timeout=max(0.0, minute_ends - time.time()))
                if any(worker.is_alive() for worker in workers):
                    series["personal-api"].append(rss_kib(personal.pid))
                    series["platform-api"].append(rss_kib(platform.pid))
            for worker in workers:
                worker.join()
            final = {"personal-api": rss_kib(personal.pid), "platform-api": rss_kib(platform.pid)}
        finally:
            for process in (personal, platform):
                process.terminate()
                process.wait(timeout=30)
            # The servers' logs outlive the temporary databases.
            for name, directory in (("personal-api", personal_dir), ("platform-api", platform_dir)):
                kept = ROOT / "target" / f"soak-{name}.log"
                kept.write_text((directory / "server.log").read_text())
    total = sum(stats.requests.values())
    errors = sum(stats.errors.values())
    print(f"\nSoak: {args.seconds} s, {total} requests ({total / args.seconds:.0f}/s), {errors} errors")
    for kind in sorted(stats.requests):
        print(f"  {kind:<12} {stats.requests[kind]:>9} requests  {stats.errors.get(kind, 0)} errors")
    for sample in stats.samples:
        print(f"  error: {sample}")
    print("  server logs: target/soak-personal-api.log, target/soak-platform-api.log")
    growth_ok = True
    for name in baseline:
        growth = (final[name] - baseline[name]) / baseline[name] * 100
        samples = series[name] + [final[name]]
        middle = samples[len(samples) // 2]
        trend = (final[name] - middle) / middle * 100
        growth_ok &= growth < 10 and trend < 5
        print(f"  {name}: RSS {baseline[name] / 1024:.1f} MiB after warm-up, {final[name] / 1024:.1f} MiB at the end ({growth:+.1f}%; last half {trend:+.1f}%)")
        print("    each minute: " + " ".join(f"{kib / 1024:.1f}" for kib in samples))
    verdict = errors == 0 and growth_ok
    print("PASS" if verdict else "FAIL: errors, RSS grew by 10% or more, or by 5% or more over the last half")
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())
