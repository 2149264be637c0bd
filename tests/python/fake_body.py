"""Stand-in bodies for the client's unit tests: `python fake_body.py MODE`.

Modes:
- echo: answers every request with `result: {}` echoing its id; writes noise to stderr first.
- stale: answers every request twice: first with id 999999 (a stale reply), then with its id.
- long N: answers every request with a result holding a string of N bytes.
- die: reads one line, writes "fake body: boom" to stderr, exits 3.
- die-mid-line: reads one line, writes the start of a reply with no LF, says why on stderr, exits 5.
- stderr-flood N: writes N bytes to stderr before every reply and again at stdin EOF, then exits 0.
- noisy: before every reply writes, on stderr, a reply with the same id and a line with no LF.
- deaf: never reads stdin; SIGTERM ends it.
- talks-first N: writes a notification of N bytes before reading anything, then answers every
  request with the length of its line in bytes (LF excluded).
- answer JSON: answers every request with the members of the JSON object JSON (besides
  `jsonrpc` and the request's id), e.g. '{"result": []}'.
- orphan: reads one line, starts a grandchild that keeps stdout and stderr open until stdin
  ends, exits 7.
- stubborn: ignores SIGTERM and stdin EOF; only SIGKILL ends it. Says `ready` (a notification on
  stdout) once SIGTERM is ignored, so a test never signals it before that.
- asks METHOD...: before answering each request, sends one request of its own per METHOD (ids
  "srv-1", "srv-2", ...) and reads the reply to each; then answers with `result: {"replies": [...]}`.
"""

import json
import signal
import subprocess
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
    elif mode == "die-mid-line":
        sys.stdin.buffer.readline()
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":1,"res')
        sys.stdout.buffer.flush()
        sys.stderr.write("fake body: cut short\n")
        sys.exit(5)
    elif mode == "stderr-flood":
        noise = ("fake body: flood " + "=" * 63 + "\n") * (int(rest[0]) // 81)

        def flood_then_answer(message):
            sys.stderr.write(noise)
            return [{"jsonrpc": "2.0", "id": message["id"], "result": {}}]
        replies(flood_then_answer)
        sys.stderr.write(noise)
    elif mode == "noisy":
        def noise_then_answer(message):
            sys.stderr.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {"from": "stderr"}})
                             + "\nno line end here")
            sys.stderr.flush()
            return [{"jsonrpc": "2.0", "id": message["id"], "result": {}}]
        replies(noise_then_answer)
    elif mode == "deaf":
        threading.Event().wait()
    elif mode == "talks-first":
        notice = {"jsonrpc": "2.0", "method": "notice", "params": {"pad": "x" * int(rest[0])}}
        sys.stdout.buffer.write(json.dumps(notice).encode() + b"\n")
        sys.stdout.buffer.flush()
        for line in sys.stdin.buffer:
            message = json.loads(line)
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"bytes": len(line.rstrip(b"\n"))}}
            sys.stdout.buffer.write(json.dumps(reply).encode() + b"\n")
            sys.stdout.buffer.flush()
    elif mode == "answer":
        members = json.loads(rest[0])
        replies(lambda m: [{"jsonrpc": "2.0", "id": m["id"], **members}])
    elif mode == "orphan":
        sys.stdin.buffer.readline()
        subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.buffer.read()"])
        sys.exit(7)
    elif mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","method":"ready"}\n')
        sys.stdout.buffer.flush()
        sys.stdin.buffer.read()
        threading.Event().wait()
    elif mode == "asks":
        def ask_then_answer(message):
            answers = []
            for number, method in enumerate(rest, start=1):
                ask = {"jsonrpc": "2.0", "id": f"srv-{number}", "method": method, "params": {"n": number}}
                sys.stdout.buffer.write(json.dumps(ask).encode() + b"\n")
                sys.stdout.buffer.flush()
                answers.append(json.loads(sys.stdin.buffer.readline()))
            return [{"jsonrpc": "2.0", "id": message["id"], "result": {"replies": answers}}]
        replies(ask_then_answer)
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(*sys.argv[1:])
