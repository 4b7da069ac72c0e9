"""A webhook receiver for Tributary's tests.

Verifies every delivery with the Standard Webhooks reference library
(`standardwebhooks` from PyPI) against each secret it was given, and answers
as the test asks. Prints its port on the first line of stdout, then one JSON
line per delivery: the webhook-id, which secrets verified it, the status it
answered, and the body.

    receive.py        (then, on stdin, one JSON line at a time:)
    {"secrets": ["whsec_..."], "fail_first": 3, "status": 204}

Each line on stdin replaces the configuration (the test learns the secret
only after registering the receiver's URL, and rotates it later).

- `fail_first`: answer 500 to that many deliveries first;
- `status`: the answer after that (204; 410 to ask for no more);
- `hold_first`: hold that many deliveries open without answering (a
  worker killed meanwhile), then answer as above.
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

LOCK = threading.Lock()
STATE = {"config": {"secrets": []}, "verifiers": [], "count": 0}


def read_configuration():
    for line in sys.stdin:
        config = json.loads(line)
        with LOCK:
            STATE["config"] = config
            STATE["verifiers"] = [Webhook(secret) for secret in config["secrets"]]
            STATE["count"] = 0
        print(json.dumps({"configured": len(config["secrets"])}), flush=True)


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (the standard library's name)
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {name.lower(): value for name, value in self.headers.items()}
        with LOCK:
            config = STATE["config"]
            verifiers = list(STATE["verifiers"])
            STATE["count"] += 1
            n = STATE["count"]
        verified = []
        for verifier in verifiers:
            try:
                verifier.verify(body, headers)
                verified.append(True)
            except WebhookVerificationError:
                verified.append(False)
        if n <= config.get("hold_first", 0):
            print(json.dumps({"held": headers.get("webhook-id")}), flush=True)
            time.sleep(3600)
            return
        if n <= config.get("hold_first", 0) + config.get("fail_first", 0):
            status = 500
        else:
            status = config.get("status", 204)
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()
        print(
            json.dumps(
                {
                    "id": headers.get("webhook-id"),
                    "timestamp": headers.get("webhook-timestamp"),
                    "signatures": headers.get("webhook-signature", "").split(" "),
                    "verified": verified,
                    "answered": status,
                    "body": json.loads(body),
                    "raw": body.decode(),
                }
            ),
            flush=True,
        )

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
server.daemon_threads = True
print(server.server_address[1], flush=True)
threading.Thread(target=read_configuration, daemon=True).start()
server.serve_forever()
