#!/usr/bin/python3
"""placement-place keeps to `placectl submit`: the same flags (what placectl itself lists as submit's, from the usage
error an unknown flag gets), the same defaults (from `placectl --helpfull`), the values each flag takes accepted by
both, and the flags reaching the PlaceRequest. Runs on the package as the checkout holds it after the build
(PYTHONPATH=client/python), without a server. Prints "SKIPPED: ..." and exits 0 when python3-grpcio or
python3-protobuf is missing."""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLACECTL = None

# submit's flags placement-place leaves out, each with why.
NOT_TAKEN = {
    "chart": "placectl draws the answer's schedule chart (placectl submit --chart); this client has no renderer",
}
# placement-place's flags placectl submit has no twin of.
OWN_FLAGS = {
    "help": "argparse's",
    "budget_ms": "the deadline in milliseconds, as PlaceRequest.budget_ms holds it",
}
# Defaults that differ in how they are written, not in what they do.
SAME_DEFAULT = {
    "objective": "placectl's empty --objective is step_time for submit (placectl.cc ObjectiveFlag)",
    "server": "placectl submit's empty --server is 127.0.0.1:50051 (placectl.cc ServerOrDefault)",
}


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def placectl(*args):
    return subprocess.run([PLACECTL, *args], capture_output=True, text=True, timeout=60)


def submit_flags():
    """The flags placectl submit takes, as its usage error for an unknown flag lists them."""
    run = placectl("submit", "--parity_probe_not_a_flag", "model.onnx")
    listed = re.search(r"submit takes ((?:--\w+(?:, )?)+)", run.stderr)
    check(run.returncode == 2 and listed, f"placectl submit did not list its flags:\n{run.stderr}")
    return {flag.strip()[2:] for flag in listed.group(1).split(",")}


def placectl_defaults():
    """Each flag's default as `placectl --helpfull` writes it ('"adam"', '0', 'false', '' for an empty list)."""
    run = placectl("--helpfull")
    defaults = {}
    for chunk in re.split(r"\n(?=    --\w+ )", run.stdout + run.stderr):
        named = re.match(r"\s*--(\w+) ", chunk)
        written = re.findall(r"default: ([^;]*);", chunk)  # the last: a flag's help may say "default: ..." too
        if named and written:
            defaults[named.group(1)] = written[-1].strip('"')
    check(len(defaults) > 50, f"placectl --helpfull gave {len(defaults)} defaults")
    return defaults


def place_flags(parser):
    """placement-place's flags by their underscore spelling, with the argparse action of each."""
    flags = {}
    for action in parser._actions:
        for option in action.option_strings:
            if option.startswith("--"):
                flags[option[2:].replace("-", "_")] = action
    return flags


def test_same_flags(parser):
    theirs, ours = submit_flags(), set(place_flags(parser))
    missing = theirs - ours - set(NOT_TAKEN)
    check(not missing, f"placement-place lacks placectl submit's {sorted(missing)}")
    stale = set(NOT_TAKEN) - theirs
    check(not stale, f"NOT_TAKEN names flags placectl submit no longer has: {sorted(stale)}")
    taken = set(NOT_TAKEN) & ours
    check(not taken, f"NOT_TAKEN names flags placement-place now takes: {sorted(taken)}")
    extra = ours - theirs - set(OWN_FLAGS)
    check(not extra, f"placement-place takes {sorted(extra)}, which placectl submit does not (a misspelling?)")


def same_value(name, theirs, ours):
    if name == "deadline":  # kept in seconds
        from placement_client.units import parse_duration
        return math.isclose(parse_duration(theirs), ours)
    if isinstance(ours, bool):
        return theirs == str(ours).lower()
    if isinstance(ours, (int, float)):
        return math.isclose(float(theirs), ours)
    if ours is None or ours == []:
        return theirs == ""
    return theirs == ours


def test_same_defaults(parser):
    theirs = placectl_defaults()
    ours = vars(parser.parse_args(["model.onnx"]))
    for name in sorted(submit_flags() - set(NOT_TAKEN) - set(SAME_DEFAULT)):
        check(name in theirs, f"placectl --helpfull gives no default for --{name}")
        check(same_value(name, theirs[name], ours[name]),
              f"--{name}: placectl's default is '{theirs[name]}', placement-place's {ours[name]!r}")


def placectl_accepts(flag, value):
    """Whether placectl submit takes the value: past the flag checks, a missing graph file is a bad input (3)."""
    run = placectl("submit", "/nonexistent/model.onnx", f"--{flag}", value)
    return run.returncode != 2


def test_same_choices(parser):
    """Every value placement-place offers placectl takes, and every word placectl names when it refuses a value
    that it does take, placement-place offers."""
    for name, action in sorted(place_flags(parser).items()):
        if not action.choices:
            continue
        for value in action.choices:
            check(placectl_accepts(name, value), f"placectl submit refuses --{name} {value}")
        refusal = placectl("submit", "/nonexistent/model.onnx", f"--{name}", "parity_probe").stderr
        named = set(re.findall(r"[a-z][a-z0-9_]*", refusal.split(f"--{name}", 1)[-1])) - {"parity_probe"}
        offered = [w for w in sorted(named - set(action.choices)) if placectl_accepts(name, w)]
        check(not offered, f"placectl submit takes --{name} {offered}, which placement-place does not offer")


def test_flags_reach_the_request(parser):
    from placement_client.cli import request_from
    model = os.path.join(SOURCE, "tests", "data", "corpus", "resnet50.onnx")
    args = parser.parse_args([model, "--devices", "8xH100", "--training", "--batch", "32", "--micro_batch", "8",
                              "--optimizer", "sgd", "--backward_multiplier", "1.5", "--runtime", "graphs",
                              "--num_data_inputs", "1", "--loop_iterations", "3", "--max_unrolled_nodes", "100",
                              "--allow_unresolved_dims", "--parallelism", "auto"])
    r = request_from(args)
    o = r.options
    check(r.micro_batch_size == 8 and r.parallelism == "auto" and o.batch_size == 32, f"plan: {r}")
    check(o.optimizer == "sgd" and o.backward_multiplier == 1.5 and o.runtime == "graphs", f"training: {o}")
    check(o.HasField("num_data_inputs") and o.num_data_inputs == 1 and o.loop_iterations == 3
          and o.max_unrolled_nodes == 100 and o.allow_unresolved_dims, f"ONNX options: {o}")
    check(not request_from(parser.parse_args([model])).options.HasField("num_data_inputs"),
          "--num_data_inputs -1 (decide) was sent as a count")


def test_a_config_goes_as_hf_config(parser):
    from placement_client.answer_report import answer_json, answer_table
    from placement_client.cli import UsageError, request_from
    from placement_client.proto import placement_pb2 as pb
    from placement_client.requests import routing_metadata
    config = os.path.join(SOURCE, "bench", "megatron", "configs", "gpt-1.7b.json")
    r = request_from(parser.parse_args([config, "--training", "--batch", "64", "--plan", "tp=2"]))
    with open(config, encoding="utf-8") as f:
        check(r.hf_config == f.read() and r.transformer_plan == "tp=2", "the config.json was not sent as hf_config")
    check(len(routing_metadata(r)[0][1]) == 64, "no x-graph-hash for a config")
    for flags, says in ((["--batch", "64"], "--training"), (["--training"], "--batch")):
        try:
            request_from(parser.parse_args([config, *flags]))
            fail(f"a config.json with {flags} was sent")
        except UsageError as e:
            check(says in str(e), f"the refusal does not name {says}: {e}")
    answer = pb.PlaceResponse(algorithm="transformer_search", compute_seconds=0.002)
    answer.transformer.plan, answer.transformer.parameters = "tp=2,pp=1", 1_650_000_000
    answer.transformer.communication.add(kind="tensor_parallel", link="intra_host", bytes=2**30, seconds=0.01)
    table = answer_table(answer)
    check("plan        tp=2,pp=1" in table and "1.65B parameters" in table, f"the plan's table:\n{table}")
    check('"plan": "tp=2,pp=1"' in answer_json(answer), "the plan's JSON")


def test_security_files():
    from placement_client.credentials import read_pem, read_token_file
    with tempfile.TemporaryDirectory() as d:
        empty, text = os.path.join(d, "empty"), os.path.join(d, "text")
        open(empty, "w").close()
        with open(text, "w") as f:
            f.write(" token-1 \n")
        check(read_token_file(text) == "token-1", "the token file's line")
        for call, says in ((lambda: read_token_file(empty), "is empty"), (lambda: read_pem("--tls_ca", text), "PEM"),
                           (lambda: read_pem("--tls_ca", os.path.join(d, "none")), "cannot read")):
            try:
                call()
                fail(f"no error that {says}")
            except ValueError as e:
                check(says in str(e), f"unclear refusal: {e}")


def main():
    global PLACECTL
    flags = argparse.ArgumentParser()
    flags.add_argument("--placectl", required=True)
    PLACECTL = os.path.abspath(flags.parse_args().placectl)
    try:
        import grpc  # noqa: F401
        import google.protobuf  # noqa: F401
    except ImportError as e:
        print(f"SKIPPED: {e} (scripts/deps.sh installs python3-grpcio and python3-protobuf)")
        return 0
    from placement_client.cli import parser
    test_same_flags(parser())
    test_same_defaults(parser())
    test_same_choices(parser())
    test_flags_reach_the_request(parser())
    test_a_config_goes_as_hf_config(parser())
    test_security_files()
    print("PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
