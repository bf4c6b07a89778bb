#!/usr/bin/env python3
"""delay-proxy: a TCP proxy that delays every byte by a fixed time.

    delay-proxy.py LISTEN_HOST:PORT TARGET_HOST:PORT DELAY_MS [PORT_FILE]

Each piece of data read from either side is written to the other side
DELAY_MS milliseconds after it arrived, in order, so a connection through
it has a round trip 2 x DELAY_MS longer and the same bandwidth.  It stands
in for network latency where `tc netem` is not available (no sch_netem
module).  Port 0 listens on a free port; its number is written to
PORT_FILE once the proxy accepts connections.

Each direction of a connection has a thread that reads and one that
writes, and the writer sleeps with time.sleep() (clock_nanosleep): the
delay holds to some tens of microseconds.  An event loop's timers would
not (asyncio rounds every wait up to a whole millisecond of epoll_wait(),
which made a 0.5 ms delay 1.1 ms, a 1 ms round trip 2.2 ms), and the
writer's timer slack is 1 ns (Linux's default, 50 us, is added to every
sleep).
"""
import collections
import ctypes
import socket
import sys
import threading
import time


class Pipe:
    """One direction: what src sends, dst gets DELAY seconds later."""

    def __init__(self, src, dst, delay, done):
        self.src, self.dst, self.delay, self.done = src, dst, delay, done
        self.queue = collections.deque()
        self.cond = threading.Condition()
        threading.Thread(target=self.read, daemon=True).start()
        threading.Thread(target=self.write, daemon=True).start()

    def put(self, data):
        with self.cond:
            self.queue.append((time.monotonic() + self.delay, data))
            self.cond.notify()

    def read(self):
        try:
            while True:
                data = self.src.recv(1 << 20)
                self.put(data)
                if not data:
                    return
        except OSError:
            self.put(b"")

    def write(self):
        # a timer slack of 1 ns, not 50 us (prctl PR_SET_TIMERSLACK, per thread)
        try:
            ctypes.CDLL(None).prctl(29, 1, 0, 0, 0)
        except (OSError, AttributeError):
            pass
        try:
            while True:
                with self.cond:
                    while not self.queue:
                        self.cond.wait()
                    due, data = self.queue.popleft()
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                if not data:
                    self.dst.shutdown(socket.SHUT_WR)
                    break
                self.dst.sendall(data)
            self.done(False)
        except OSError:
            self.done(True)


def handle(client, target, delay):
    thost, tport = target.rsplit(":", 1)
    try:
        server = socket.create_connection((thost, int(tport)))
    except OSError as e:
        print(f"delay-proxy: cannot connect to {target}: {e}", file=sys.stderr)
        client.close()
        return
    for s in (client, server):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ended = [0]
    lock = threading.Lock()

    def done(failed):
        # both directions ended, or one failed: the connection is over
        # (shutdown() wakes a thread still in recv(), close() would not)
        with lock:
            ended[0] += 1
            if ended[0] == 2 or failed:
                for s in (client, server):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
            if ended[0] == 2:
                client.close()
                server.close()

    Pipe(client, server, delay, done)
    Pipe(server, client, delay, done)


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(64)
    delay = float(sys.argv[3]) / 1000.0
    lhost, lport = sys.argv[1].rsplit(":", 1)
    listener = socket.create_server((lhost, int(lport)), backlog=64)
    if len(sys.argv) == 5:
        port_file = sys.argv[4]
        with open(port_file + ".tmp", "w") as f:
            f.write(f"{listener.getsockname()[1]}\n")
        import os
        os.rename(port_file + ".tmp", port_file)
    while True:
        client, _ = listener.accept()
        handle(client, sys.argv[2], delay)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
