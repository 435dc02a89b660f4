#!/usr/bin/python3
"""Every fenced ```sh block of README.md runs as written, from a fresh copy of the checkout.

Each block runs as one bash script (-e -o pipefail) in a copy of its own: the checkout's top-level entries linked
into a temporary folder, `build` linked to the build tree, client/python copied (a pip install builds in the
package's folder), HOME a temporary folder (the README's ~/.venvs), no `PLACEMENT_*` variables, pip kept off the
network. PATH is left as it is: the README spells build/client/placectl, since nothing installs placectl outside
the Docker image. A command may run for --command-timeout seconds and all blocks together for --total-timeout;
a block fails naming its line, the command, its exit code and the tail of its stderr, and so does one that leaves
a process running after its last command.

Blocks not run, each with its reason printed:
  * ```text blocks (command synopses with placeholders) and ```python blocks (a program, not commands: the torch
    split needs torch, torchvision, a server and two CUDA devices);
  * set-up blocks, whose commands are all ./placement, scripts/deps.sh, cmake or ctest: they install packages and
    build and test everything, which this test runs after, inside ctest;
  * blocks with a comment line `# needs WHAT`: Docker, a registry, a cluster, GPUs are never used here. A block
    that needs `../shared` (the published benchmark inputs, beside the checkout) runs when --shared names a
    folder with bench/ in it, linked as ../shared of the copy; without one it is not run. No other block may
    mention ../shared.

The address 127.0.0.1:50051 (and the metrics address 127.0.0.1:9464) is replaced by one this test picks: a block
that starts placement_server itself gets free ports of its own (it must name --listen and --metrics_listen), the
others reach one placement_server this test starts on a free port for them.

Prints "SKIPPED: ..." and exits 0 when placectl or placement_server is not built.
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

LISTEN = "127.0.0.1:50051"
METRICS = "127.0.0.1:9464"
SHELL_LANGUAGES = ("sh", "bash", "shell")
# Set-up commands: the first steps of a fresh clone, which build what this test runs.
SETUP_PREFIXES = ("./placement ", "scripts/deps.sh", "cmake ", "(cd build && ctest")
# Server commands whose address defaults to 127.0.0.1:50051 when --server is left out.
SERVER_COMMAND = re.compile(r"\bplacectl\s+(submit|info|health|bench|reload)\b")
NEEDS = re.compile(r"^#\s*needs\b\s*(.*)$")
# Paths copied into a block's copy of the checkout rather than linked, because its commands write inside them.
COPIED = ("client/python",)
COPY_IGNORED = shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".mypy_cache")
# Top-level entries of the checkout a fresh clone does not have (the build tree is linked on its own).
NOT_IN_A_CLONE = (".git", "build", "data", ".cache")


class Block:
    def __init__(self, line, language, lines):
        self.line = line  # of the opening fence, 1-based
        self.language = language
        self.lines = lines  # (line number, text) of the body

    def commands(self):
        """(line number, text) of each command: continuation lines joined, comment-only and blank lines left out."""
        result, pending, start = [], [], None
        for number, text in self.lines:
            if not pending and (not text.strip() or text.lstrip().startswith("#")):
                continue
            if not pending:
                start = number
            pending.append(text)
            if not text.rstrip().endswith("\\"):
                result.append((start, "\n".join(pending)))
                pending = []
        if pending:
            result.append((start, "\n".join(pending)))
        return result

    def needs(self):
        for _, text in self.lines:
            match = NEEDS.match(text.strip())
            if match:
                return match.group(1).strip() or "something unnamed"
        return None

    def text(self):
        return "\n".join(text for _, text in self.lines)


def fenced_blocks(path):
    blocks, current = [], None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            stripped = line.rstrip("\n")
            if current is None:
                match = re.match(r"^```\s*([\w+-]*)\s*$", stripped)
                if match:
                    current = Block(number, match.group(1).lower(), [])
            elif stripped.strip() == "```":
                blocks.append(current)
                current = None
            else:
                current.lines.append((number, stripped))
    if current is not None:
        raise SystemExit(f"{path}:{current.line}: a fence that is never closed")
    return blocks


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_of_checkout(source, build, dest, shared):
    """dest/clone: the checkout's entries linked (COPIED ones copied), build linked; dest/shared when given."""
    clone = os.path.join(dest, "clone")

    def fill(src_dir, dst_dir, relative):
        os.makedirs(dst_dir)
        for name in sorted(os.listdir(src_dir)):
            if not relative and name in NOT_IN_A_CLONE:
                continue
            path = f"{relative}/{name}" if relative else name
            src, dst = os.path.join(src_dir, name), os.path.join(dst_dir, name)
            if path in COPIED:
                shutil.copytree(src, dst, ignore=COPY_IGNORED, symlinks=True)
            elif any(c.startswith(path + "/") for c in COPIED):
                fill(src, dst, path)
            else:
                os.symlink(src, dst)

    fill(source, clone, "")
    os.symlink(build, os.path.join(clone, "build"))
    if shared:
        os.symlink(shared, os.path.join(dest, "shared"))
    os.makedirs(os.path.join(dest, "home"))
    return clone


def fresh_environment(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLACEMENT_") and k != "PYTHONPATH"}
    env.update(HOME=home, PYTHONDONTWRITEBYTECODE="1", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def processes_in_group(pgid):
    """Live processes (not zombies) of the process group, as 'pid command line'."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) != pgid or fields[0] == "Z":
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command_line = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
            found.append(f"{pid} {command_line}")
        except (OSError, ValueError):
            continue
    return found


def tail(path, lines):
    try:
        with open(path, errors="replace") as f:
            content = f.read().rstrip("\n").split("\n")
    except OSError:
        return "    (none)"
    if content == [""]:
        return "    (empty)"
    return "\n".join("    " + line for line in content[-lines:])


class SuiteServer:
    """One placement_server on free ports for the blocks that reach 127.0.0.1:50051 without starting one."""

    def __init__(self, build, work):
        self.build, self.work, self.process, self.listen, self.metrics = build, work, None, None, None

    def start(self):
        if self.process:
            return
        os.makedirs(self.work, exist_ok=True)
        self.out = os.path.join(self.work, "server.out")
        self.err = os.path.join(self.work, "server.err")
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.process = subprocess.Popen(
                [os.path.join(self.build, "server", "placement_server"), "--listen", "127.0.0.1:0",
                 "--metrics_listen", "127.0.0.1:0", "--data_dir", os.path.join(self.work, "data")],
                stdout=out, stderr=err, cwd=self.work, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(self.out) as f:
                printed = f.read()
            listen = re.search(r"listening on (\S+)", printed)
            metrics = re.search(r"metrics on (\S+)", printed)
            if listen and metrics:
                self.listen, self.metrics = listen.group(1), metrics.group(1)
                health = subprocess.run([os.path.join(self.build, "client", "placectl"), "health", "--server",
                                         self.listen, "--timeout", "2s"], capture_output=True, timeout=30)
                if health.returncode == 0:
                    print(f"placement_server for the blocks that reach {LISTEN}: {self.listen}")
                    return
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"placement_server did not turn ready:\n{tail(self.err, 20)}")

    def stop(self):
        if not self.process:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


class Runner:
    def __init__(self, args, work):
        self.args, self.work = args, work
        self.deadline = time.monotonic() + args.total_timeout
        self.server = SuiteServer(args.build, os.path.join(work, "suite-server"))
        self.failures = []

    def substitutions(self, block):
        text = block.text()
        if "placement_server" in text:
            if LISTEN not in text or METRICS not in text:
                raise ValueError(f"it starts placement_server: name --listen {LISTEN} and --metrics_listen {METRICS}"
                                 " so that this test can move them to free ports")
            return {LISTEN: f"127.0.0.1:{free_port()}", METRICS: f"127.0.0.1:{free_port()}"}
        if LISTEN in text:
            self.server.start()
            return {LISTEN: self.server.listen, METRICS: self.server.metrics}
        return {}

    def run(self, block, shared):
        commands = block.commands()
        for line, command in commands:
            if SERVER_COMMAND.search(command) and "--server" not in command:
                raise ValueError(f"line {line}: `{command}` names no --server (spell {LISTEN})")
        substitutions = self.substitutions(block)
        where = os.path.join(self.work, f"line{block.line}")
        clone = copy_of_checkout(self.args.source, self.args.build, where, shared)
        step_file = os.path.join(where, "step")
        script = ["# README.md, the block at line %d" % block.line]
        for index, (_, command) in enumerate(commands):
            for address, replacement in substitutions.items():
                command = command.replace(address, replacement)
            script.append(f"printf {index} > \"$README_COMMAND_STEP\"")
            script.append(command)
        script_path = os.path.join(where, "block.sh")
        with open(script_path, "w") as f:
            f.write("\n".join(script) + "\n")
        env = fresh_environment(os.path.join(where, "home"))
        env["README_COMMAND_STEP"] = step_file
        out, err = os.path.join(where, "stdout"), os.path.join(where, "stderr")
        started = time.monotonic()
        with open(out, "w") as stdout, open(err, "w") as stderr:
            process = subprocess.Popen(["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", script_path],
                                       cwd=clone, env=env, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
        step, step_started, why = None, started, None
        while process.poll() is None:
            now = time.monotonic()
            try:
                with open(step_file) as f:
                    current = f.read().strip()
            except OSError:
                current = None
            if current != step:
                step, step_started = current, now
            if now - step_started > self.args.command_timeout:
                why = f"still running after {self.args.command_timeout:.0f} s"
            elif now > self.deadline:
                why = f"still running when the test's bound ({self.args.total_timeout:.0f} s) ran out"
            if why:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                break
            time.sleep(0.05)
        seconds = time.monotonic() - started
        try:
            with open(step_file) as f:
                index = int(f.read().strip())
        except (OSError, ValueError):
            index = 0
        line, command = commands[index]
        if why is None and process.returncode != 0:
            why = f"exited {process.returncode}"
        # What the block started must have stopped with it (a server it runs in the background must be stopped).
        leftovers = processes_in_group(process.pid)
        grace = time.monotonic() + 15
        while leftovers and time.monotonic() < grace:
            time.sleep(0.1)
            leftovers = processes_in_group(process.pid)
        if leftovers:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            if why is None:
                line, command = commands[-1]
                why = "left running after its last command: " + "; ".join(leftovers)
        if why is not None:
            moved = "".join(f"\n  ({a} was replaced by {b})" for a, b in substitutions.items())
            self.failures.append(
                f"README.md:{block.line}: the command at line {line}\n  {command}\n{why}{moved}\n"
                f"  stderr (last lines):\n{tail(err, 25)}\n  stdout (last lines):\n{tail(out, 10)}")
            print(f"README.md:{block.line}  FAILED at line {line} ({why}), {seconds:.1f} s")
            return
        shutil.rmtree(where, ignore_errors=True)
        print(f"README.md:{block.line}  ran {len(commands)} command(s) in {seconds:.1f} s")


def why_not_run(block, shared):
    """None for a block to run, else why it is not run; ValueError when the block breaks the README's rules."""
    if block.language not in SHELL_LANGUAGES:
        return f"a ```{block.language or '(plain)'} block, not shell commands"
    commands = block.commands()
    needs = block.needs()
    if needs and "../shared" in needs:
        return None if shared else "it needs ../shared and no --shared folder with bench/ was given"
    if needs:
        return f"it needs {needs}"
    if "../shared" in block.text():
        raise ValueError("it uses ../shared, which a clone does not have: use the repository's files, or mark it "
                         "`# needs ../shared (...)`")
    setup = [command for _, command in commands if command.startswith(SETUP_PREFIXES)]
    if setup and len(setup) == len(commands):
        return "set-up (it installs packages, builds and tests; this test runs after it)"
    if setup:
        raise ValueError(f"set-up commands ({setup[0].splitlines()[0]}) share the block with others: give them a "
                         "block of their own")
    return None if commands else "no commands"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True, help="the checkout's root")
    parser.add_argument("--build", required=True, help="its build tree (linked as build/ of each copy)")
    parser.add_argument("--shared", default="", help="the folder ../shared stands for (with bench/); empty: none")
    parser.add_argument("--command-timeout", type=float, default=120)
    parser.add_argument("--total-timeout", type=float, default=170)
    args = parser.parse_args()
    args.source, args.build = os.path.abspath(args.source), os.path.abspath(args.build)
    for program in ("client/placectl", "server/placement_server"):
        if not os.access(os.path.join(args.build, program), os.X_OK):
            print(f"SKIPPED: {program} is not built in {args.build}")
            return 0
    shared = os.path.abspath(args.shared) if args.shared else ""
    if shared and not os.path.isdir(os.path.join(shared, "bench")):
        shared = ""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="readme_commands_") as work:
        runner = Runner(args, work)
        try:
            for block in fenced_blocks(os.path.join(args.source, "README.md")):
                name = f"README.md:{block.line}"
                try:
                    reason = why_not_run(block, shared)
                    if reason:
                        print(f"{name}  not run: {reason}")
                        continue
                    runner.run(block, shared if block.needs() else "")
                except (ValueError, RuntimeError, OSError) as e:
                    runner.failures.append(f"{name}: {e}")
                    print(f"{name}  FAILED: {e}")
        finally:
            runner.server.stop()
    print(f"{time.monotonic() - started:.1f} s in all")
    if runner.failures:
        print("\n" + "\n\n".join(runner.failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
