"""Stand-in bodies for the client's unit tests: `python fake_body.py MODE`.

Modes:
- echo: answers every request with `result: {}` echoing its id; writes noise to stderr first.
- stale: answers every request twice: first with id 999999 (a stale reply), then with its id.
- long N: answers every request with a result holding a string of N bytes.
- die: reads one line, writes "fake body: boom" to stderr, exits 3.
- stubborn: ignores SIGTERM and stdin EOF; only SIGKILL ends it. Says `ready` (a notification on
  stdout) once SIGTERM is ignored, so a test never signals it before that.
"""

import json
import signal
import sys
import threading


def replies(make):
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" in message:
            for reply in make(message):
                sys.stdout.buffer.write(json.dumps(reply).encode() + b"\n")
            sys.stdout.buffer.flush()


def main(mode, *rest):
    if mode == "echo":
        sys.stderr.write("fake body: noise on stderr\n" * 50)
        sys.stderr.flush()
        replies(lambda m: [{"jsonrpc": "2.0", "id": m["id"], "result": {}}])
    elif mode == "stale":
        replies(lambda m: [{"jsonrpc": "2.0", "id": 999999, "result": {"stale": True}},
                           {"jsonrpc": "2.0", "id": m["id"], "result": {}}])
    elif mode == "long":
        size = int(rest[0])
        replies(lambda m: [{"jsonrpc": "2.0", "id": m["id"], "result": {"blob": "x" * size}}])
    elif mode == "die":
        sys.stdin.buffer.readline()
        sys.stderr.write("fake body: boom\n")
        sys.stderr.flush()
        sys.exit(3)
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","method":"ready"}\n')
        sys.stdout.buffer.flush()
        sys.stdin.buffer.read()
        threading.Event().wait()
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(*sys.argv[1:])
