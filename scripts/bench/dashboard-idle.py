#!/usr/bin/env python3
"""scripts/bench/dashboard-idle.py: the dashboard's answers while idle connections come.

Issue 30's attack: IDLE connections (45 unless told) that send nothing, each opened again
as soon as the dashboard closes it (checked once a second), as any local process can.
Meanwhile the page's request (GET /api/loops with the token) is sent 15 times, one every
200 ms; prints each answer's status (or the error) and time, then the median and slowest.

Usage: scripts/bench/dashboard-idle.py PAGENT_BINARY [IDLE]
Linux or macOS; a scratch config folder, so no loop is listed.
"""

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def start(binary, config):
    env = dict(os.environ, PAGENT_CONFIG_DIR=config, NO_COLOR="1")
    env.pop("PAGENT_DASHBOARD_TOKEN", None)
    proc = subprocess.Popen([binary, "dashboard", "--no-open"], env=env,
                            stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip().removeprefix("pagent dashboard: ")
    hostport, token = url.removeprefix("http://").split("/?token=")
    host, port = hostport.rsplit(":", 1)
    return proc, (host, int(port)), token


def attack(addr, idle, stop):
    conns = [None] * idle
    while not stop.is_set():
        for i, conn in enumerate(conns):
            if conn is not None:
                try:
                    if conn.recv(256, socket.MSG_DONTWAIT) is not None:
                        conn.close()
                        conns[i] = None
                except BlockingIOError:
                    pass
                except OSError:
                    conn.close()
                    conns[i] = None
            if conns[i] is None:
                conns[i] = socket.create_connection(addr)
        time.sleep(1)
    for conn in conns:
        if conn is not None:
            conn.close()


def ask(addr, token):
    request = (f"GET /api/loops HTTP/1.1\r\nHost: {addr[0]}:{addr[1]}\r\n"
               f"X-Pagent-Token: {token}\r\nSec-Fetch-Site: same-origin\r\n\r\n").encode()
    started = time.monotonic()
    try:
        with socket.create_connection(addr, timeout=15) as conn:
            conn.sendall(request)
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
        status = answer.split(b" ", 2)[1].decode() if answer else "no answer"
    except OSError as err:
        status = type(err).__name__
    return status, time.monotonic() - started


def main():
    binary = sys.argv[1]
    idle = int(sys.argv[2]) if len(sys.argv) > 2 else 45
    with tempfile.TemporaryDirectory() as config:
        proc, addr, token = start(binary, config)
        stop = threading.Event()
        attacker = threading.Thread(target=attack, args=(addr, idle, stop))
        attacker.start()
        time.sleep(2.5)
        answers = []
        for _ in range(15):
            answers.append(ask(addr, token))
            time.sleep(0.2)
        stop.set()
        attacker.join()
        proc.kill()
    times = [t * 1000 for _, t in answers]
    print(" ".join(status for status, _ in answers))
    ok = sum(1 for status, _ in answers if status == "200")
    print(f"{ok} of 15 answered 200 beside {idle} idle connections; "
          f"median {statistics.median(times):.1f} ms, slowest {max(times):.1f} ms")


if __name__ == "__main__":
    main()
