#!/usr/bin/python3
"""Debian's nginx, run by deploy/nginx/balancer.sh, in front of three real placement_server replicas on loopback
addresses (127.0.0.11-13) that the balancer knows by name (replica-0..2, resolved through a hosts file the test
edits, as Docker's DNS would change).

Checks what the balancer is for: every repeat of a graph reaches the replica that placed it first and comes back
from its cache; different graphs spread over the replicas; with one replica killed, every request still succeeds,
the graphs of the live replicas stay where their cached answers are, and only the dead replica's graphs move (all
to one replica, where their repeats hit the cache); the dead replica started again at a new address with its
data is found by the balancer without a restart, and its graphs go back to it, answered from its cache.
Which replica answered is read from each replica's /metrics (placement_requests_total{method="Place",code="OK"}).

Exit 0: passed, 1: failed, 77: skipped (no nginx). Every process it starts is stopped on every exit path, and the
whole test is bounded by --timeout seconds.
"""
import argparse
import glob
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BALANCER = os.path.join(ROOT, "deploy", "nginx", "balancer.sh")
PLACE_FLAGS = ["--algorithm", "m_topo", "--budget_ms", "2000", "--deadline_ms", "20000"]
ONNX_DEVICES = ["--devices", "4xV100"]  # JSON graphs here are Tarnawski graphs, which carry their devices
PLACE_OK = re.compile(r'^placement_requests_total\{(?=[^}]*method="Place")(?=[^}]*code="OK")[^}]*\}\s+(\S+)$', re.M)


class Failure(Exception):
    pass


class TimeUp(Exception):
    pass


def find_nginx():
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)


def wait_for_line(path, prefix, process, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with open(path) as f:
            for line in f:
                if line.startswith(prefix):
                    return line[len(prefix):].strip()
        if process.poll() is not None:
            raise Failure(f"{process.args[0]} exited ({process.returncode}) before printing '{prefix}'")
        time.sleep(0.05)
    raise Failure(f"no '{prefix}' line within {seconds} s")


class Replica:
    """A placement_server on a loopback address of its own; `port` 0 lets the kernel pick one."""

    def __init__(self, server, work, index, ip, port=0):
        self.name = f"replica-{index}"
        self.ip = ip
        self.dir = os.path.join(work, self.name)
        os.makedirs(self.dir, exist_ok=True)
        self.stdout = os.path.join(self.dir, f"stdout-{ip}")
        self.log = os.path.join(self.dir, f"server-{ip}.log")
        with open(self.stdout, "w") as out, open(self.log, "w") as err:
            self.process = subprocess.Popen(
                [server, "--listen", f"{ip}:{port}", "--metrics_listen", f"{ip}:0", "--data_dir",
                 os.path.join(self.dir, "data"), "--grace_period", "2s", "--threads", "1", "--policy_device", "none"],
                stdout=out, stderr=err)
        self.address = None
        self.metrics = None

    def wait_listening(self):
        self.address = wait_for_line(self.stdout, "listening on ", self.process, 30)
        self.metrics = wait_for_line(self.stdout, "metrics on ", self.process, 5)

    @property
    def port(self):
        return int(self.address.rsplit(":", 1)[1])

    def placed(self):
        """Place calls this replica answered OK, from a Prometheus scrape of its /metrics."""
        with urllib.request.urlopen(f"http://{self.metrics}/metrics", timeout=5) as response:
            text = response.read().decode()
        return sum(float(v) for v in PLACE_OK.findall(text))

    def alive(self):
        return self.process.poll() is None


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_hosts(path, replicas):
    """The balancer's view of DNS: "ADDRESS NAME" per live replica, replaced whole (renamed into place)."""
    with open(path + ".new", "w") as f:
        f.writelines(f"{r.ip} {r.name}\n" for r in replicas)
    os.chmod(path + ".new", 0o644)
    os.replace(path + ".new", path)


def start_balancer(nginx, work, replicas, hosts):
    """Runs deploy/nginx/balancer.sh (nginx and its re-resolving loop) in a fresh prefix, as nobody when the
    test runs as root."""
    for attempt in range(3):  # the free port may be taken between finding and binding it
        prefix = os.path.join(work, f"nginx-{attempt}")
        os.makedirs(prefix)
        port = free_port()
        log = os.path.join(prefix, "balancer.log")
        with open(log, "w"):
            pass
        preexec = None
        balancer = BALANCER
        if os.geteuid() == 0:
            # nginx's user must reach the scripts: a checkout in a private folder (mktemp -d is 0700) it cannot.
            scripts = os.path.join(work, "nginx_scripts")
            shutil.copytree(os.path.dirname(BALANCER), scripts, dirs_exist_ok=True)
            balancer = os.path.join(scripts, os.path.basename(BALANCER))
            nobody = pwd.getpwnam("nobody")
            os.chmod(work, 0o711)
            for p in (prefix, log):
                os.chown(p, nobody.pw_uid, nobody.pw_gid)

            def preexec():
                os.setgroups([])
                os.setgid(nobody.pw_gid)
                os.setuid(nobody.pw_uid)
        env = dict(os.environ, PLACEMENT_HOSTS_FILE=hosts, PLACEMENT_RESOLVE_SECONDS="0.3", PLACEMENT_NGINX=nginx)
        command = [balancer, prefix, f"127.0.0.1:{port}"] + [f"{r.name}:{r.port}" for r in replicas]
        # nginx writes its access log to /dev/stdout, which it reopens: the file must belong to nginx's user.
        # A session of its own, so that stop() can reach nginx and its workers as well as the script.
        with open(log, "a") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=preexec,
                                       start_new_session=True)
        end = time.monotonic() + 10
        while time.monotonic() < end and process.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return process, f"127.0.0.1:{port}", log
            except OSError:
                time.sleep(0.05)
        stop(process, group=True)
        with open(log) as f:
            print(f"the balancer did not start on port {port}:\n{f.read()}", file=sys.stderr)
    raise Failure("the balancer did not start")


def wait_for_reload(log, count, seconds=15):
    """Waits until the balancer has said `count` times that it reloaded for new addresses."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with open(log) as f:
            if f.read().count("replica addresses changed") >= count:
                return
        time.sleep(0.1)
    raise Failure(f"the balancer did not reload within {seconds} s of a replica's new address")


def stop(process, group=False):
    """SIGTERM, then SIGKILL after 3 s; group: also every process left in its process group (nginx's workers)."""
    if process is None:
        return
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
    if group:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def wait_ready(probe, replica):
    """Readiness, asked of the replica directly."""
    end = time.monotonic() + 30
    while subprocess.run([probe, "--server", replica.address, "--deadline_ms", "2000", "health"],
                         capture_output=True, timeout=10).returncode != 0:
        if time.monotonic() > end:
            raise Failure(f"{replica.name} at {replica.address} did not become ready")
        time.sleep(0.1)


def place(probe, address, graph):
    """One Place through the balancer; returns cache_hit."""
    devices = ONNX_DEVICES if graph.endswith(".onnx") else []
    result = subprocess.run([probe, "--server", address, "place", graph] + PLACE_FLAGS + devices, capture_output=True,
                            text=True, timeout=30)
    if result.returncode != 0:
        raise Failure(f"Place {os.path.basename(graph)} through the balancer failed: {result.stderr.strip()}")
    match = re.search(r"^cache_hit\s+(true|false)$", result.stdout, re.M)
    if not match:
        raise Failure(f"no cache_hit line in the answer:\n{result.stdout}")
    return match.group(1) == "true"


def place_and_locate(probe, address, graph, replicas):
    """Places the graph and returns (the replica that answered, cache_hit)."""
    live = [r for r in replicas if r.alive()]
    before = {r.name: r.placed() for r in live}
    hit = place(probe, address, graph)
    answered = [r for r in live if r.placed() > before[r.name]]
    if len(answered) != 1:
        raise Failure(f"{os.path.basename(graph)}: expected one replica to count the call, got "
                      f"{[r.name for r in answered]}")
    return answered[0], hit


def run(args, work):
    nginx = find_nginx()
    if nginx is None:
        print("SKIP: nginx is not installed (scripts/deps.sh installs it)")
        return 77
    graphs = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "corpus", "*.onnx")))
    if len(graphs) < 6:
        raise Failure(f"expected the ONNX corpus in tests/data/corpus, found {len(graphs)} models")
    # More keys, so that "spread over the replicas" is certain (all 16 on one of three replicas: ~1e-7): variants
    # of a small graph whose first layer is a little slower each, so each is a graph of its own.
    with open(os.path.join(ROOT, "examples", "graphs", "tiny_pipeline.json")) as f:
        tiny = json.load(f)
    for i in range(8):
        tiny["nodes"][0]["cpuLatency"] += 0.125
        graphs.append(os.path.join(work, f"tiny_pipeline_{i}.json"))
        with open(graphs[-1], "w") as f:
            json.dump(tiny, f)

    replicas = []
    nginx_process = None
    try:
        replicas = [Replica(args.server, work, i, f"127.0.0.{11 + i}") for i in range(3)]
        for r in replicas:
            r.wait_listening()
            wait_ready(args.probe, r)
        hosts = os.path.join(work, "hosts")
        write_hosts(hosts, replicas)
        nginx_process, balancer, nginx_log = start_balancer(nginx, work, replicas, hosts)
        with open(f"/proc/{nginx_process.pid}/status") as f:
            uid = int(re.search(r"^Uid:\s+(\d+)", f.read(), re.M).group(1))
        if uid == 0:
            raise Failure("the balancer runs as root")
        print(f"balancer (uid {uid}) on {balancer} in front of " + ", ".join(f"{r.name} {r.address}" for r in replicas))

        owner = {}
        for g in graphs:
            first, hit = place_and_locate(args.probe, balancer, g, replicas)
            if hit:
                raise Failure(f"{os.path.basename(g)}: the first request was a cache hit on fresh caches")
            second, hit = place_and_locate(args.probe, balancer, g, replicas)
            if second is not first:
                raise Failure(f"{os.path.basename(g)}: the repeat went to {second.name}, the first to {first.name}")
            if not hit:
                raise Failure(f"{os.path.basename(g)}: the repeat on {first.name} was not a cache hit")
            owner[g] = first
            print(f"  {os.path.basename(g):28s} -> {first.name} (repeat: cache hit)")
        used = {r.name for r in owner.values()}
        if len(used) < 2:
            raise Failure(f"{len(graphs)} different graphs all went to {used.pop()}")
        print(f"{len(graphs)} graphs over {len(used)} replicas")

        victim = max(replicas, key=lambda r: sum(1 for o in owner.values() if o is r))
        victim.process.kill()
        victim.process.wait(timeout=5)
        print(f"killed {victim.name} (SIGKILL)")
        for g in graphs:
            answered, hit = place_and_locate(args.probe, balancer, g, replicas)
            if owner[g] is not victim:
                if answered is not owner[g] or not hit:
                    raise Failure(f"{os.path.basename(g)}: after the kill it went to {answered.name} (cache hit "
                                  f"{hit}); it belongs to {owner[g].name}, which is alive")
                continue
            if hit:
                raise Failure(f"{os.path.basename(g)}: moved to {answered.name}, which had not seen it, yet a cache hit")
            again, hit_again = place_and_locate(args.probe, balancer, g, replicas)
            if again is not answered or not hit_again:
                raise Failure(f"{os.path.basename(g)}: moved to {answered.name}, the repeat went to {again.name} "
                              f"(cache hit {hit_again})")
            print(f"  {os.path.basename(g):28s} -> {answered.name} (moved from {victim.name}; repeat: cache hit)")

        # The victim comes back at a new address with its data, as a recreated container would: the balancer
        # finds it by name without a restart, and its graphs go back to it, answered from its cache.
        index = replicas.index(victim)
        reborn = Replica(args.server, work, index, f"127.0.0.{21 + index}", port=victim.port)
        reborn.wait_listening()
        wait_ready(args.probe, reborn)
        replicas[index] = reborn
        write_hosts(hosts, replicas)
        wait_for_reload(nginx_log, 1)
        # The reload is graceful: new workers take new connections once they are up. Until one of the victim's
        # graphs reaches the new address, the old workers may still answer.
        probe_graph = next(g for g in graphs if owner[g] is victim)
        end = time.monotonic() + 10
        while place_and_locate(args.probe, balancer, probe_graph, replicas)[0] is not reborn:
            if time.monotonic() > end:
                raise Failure(f"10 s after the reload, {victim.name}'s graphs still do not reach {reborn.address}")
            time.sleep(0.1)
        print(f"{victim.name} started again at {reborn.address}; the balancer reloaded")
        # A worker of the old configuration may still take a connection for a moment after the first request
        # reached the new address: each graph gets a few seconds to settle on its replica, not a second chance
        # to be routed anywhere else for good.
        for g in graphs:
            expected = reborn if owner[g] is victim else owner[g]
            end = time.monotonic() + 5
            while True:
                answered, hit = place_and_locate(args.probe, balancer, g, replicas)
                if (answered is expected and hit) or time.monotonic() > end:
                    break
                time.sleep(0.1)
            if answered is not expected or not hit:
                raise Failure(f"{os.path.basename(g)}: after the restart it went to {answered.name} (cache hit "
                              f"{hit}); it belongs to {expected.name} at {expected.address}")
        print("every graph back on its replica, answered from its cache")
        print("PASS")
        return 0
    except (Failure, TimeUp, subprocess.TimeoutExpired):
        for r in replicas:
            with open(r.log) as f:
                print(f"--- {r.name} log (tail)\n" + "".join(f.readlines()[-15:]), file=sys.stderr)
        if nginx_process is not None:
            with open(nginx_log) as f:
                print("--- balancer log (tail)\n" + "".join(f.readlines()[-30:]), file=sys.stderr)
        raise
    finally:
        stop(nginx_process, group=True)
        for r in replicas:
            stop(r.process)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="placement_server binary")
    parser.add_argument("--probe", required=True, help="placement_probe binary")
    parser.add_argument("--timeout", type=int, default=60, help="seconds for the whole test")
    args = parser.parse_args()

    def time_up(signum, frame):
        raise TimeUp(f"the test ran past {args.timeout} s")

    signal.signal(signal.SIGALRM, time_up)
    signal.alarm(args.timeout)
    work = tempfile.mkdtemp(prefix="placement_balancer_")
    try:
        return run(args, work)
    except (Failure, TimeUp, subprocess.TimeoutExpired) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
