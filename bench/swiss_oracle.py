#!/usr/bin/env python3
"""FIDE Dutch Swiss pairing as a test oracle for domain::tournaments::swiss.

Reads one JSON document on stdin and writes one on stdout: the next round's pairing
as computed by caissify-pairings 0.5.0, a pure-Python FIDE Dutch (C.04.3) engine
cross-checked against bbpPairings (its README reports 0 discrepancies on 70k rounds).

Install (once; the venv is git-ignored):

    python3 -m venv bench/.venv-swiss && bench/.venv-swiss/bin/pip install caissify-pairings==0.5.0

Run:

    bench/.venv-swiss/bin/python bench/swiss_oracle.py < bench/swiss-fixtures/round1-six.json

Input:

    {"rounds": <total rounds of the event>,
     "players": [{"id": "<string>", "rating": <number>, "score_half_points": <int>,
                  "opponents": ["<id>", ...],       # everyone met, in order
                  "colours": ["W" | "B", ...],      # one per game played, in order; W moved first
                  "byes": <number of 1-point byes had>,
                  "floats": ["up" | "down" | "none", ...]   # optional, see below
                 }, ...]}

The players are in standings order and all of them are paired. The round paired is
max(len(colours) + byes) + 1. Opponents not in the list (withdrawn players) only count
for the players who met them.

Output:

    {"games": [["<first mover>", "<second>"], ...], "bye": "<id>" | null, "error": "<message>" | null}

Games come in the library's table order. When the library cannot pair, or its answer
breaks an absolute rule (a rematch, a second 1-point bye, anyone left out or twice, a
third colour in a row or a colour difference past 2 outside the last round's topscorer
exception), "error" says so and games is empty, bye null. Malformed input also gives an
error document, with exit status 2.

How the library's state is rebuilt (its Python API, generate_pairings("dutch", ...)):
- score = score_half_points / 2; colour history = colours; bye_count = byes;
  previous_pairings = every (player, opponent) pair; total_rounds = rounds (the last
  round relaxes colour rules for topscorers).
- Pairing numbers (FIDE's initial ranking) are assigned by the library from rating,
  highest first; equal ratings are broken by the order of the input (starting_number =
  position in it). Inside a score group Dutch orders players by pairing number, not by
  the standings.
- Float history (Dutch avoids giving the same float direction in consecutive rounds):
  the input carries no per-round scores, so it cannot be derived here. A player's
  optional "floats" list (one entry per round played or byed, a bye counting "down",
  as caissify_pairings.fpc derives it from a TRF) is passed through; without it every
  past round counts as "none", and the float criteria see nothing.
"""

import json
import sys
import warnings

PACKAGE = "caissify-pairings"
VERSION = "0.5.0"


def fail(message, status=0):
    json.dump({"games": [], "bye": None, "error": message}, sys.stdout)
    sys.stdout.write("\n")
    sys.exit(status)


def parse(doc):
    """The engine's arguments from the input document, and the id maps."""
    rounds = int(doc["rounds"])
    players = doc["players"]
    ids = [str(p["id"]) for p in players]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate player ids")
    number = {pid: k + 1 for k, pid in enumerate(ids)}
    engine_players, previous = [], set()
    played = 0
    for k, p in enumerate(players):
        colours = p.get("colours", [])
        if any(c not in ("W", "B") for c in colours):
            raise ValueError(f"{p['id']}: colours must be W or B")
        byes = int(p.get("byes", 0))
        history = len(colours) + byes
        played = max(played, history)
        floats = p.get("floats")
        if floats is None:
            floats = ["none"] * history
        elif any(f not in ("up", "down", "none") for f in floats):
            raise ValueError(f"{p['id']}: floats must be up, down or none")
        me = number[str(p["id"])]
        for o in p.get("opponents", []):
            if str(o) in number:
                previous.add((min(me, number[str(o)]), max(me, number[str(o)])))
        engine_players.append({
            "id": me,
            "name": str(p["id"]),
            "starting_number": k + 1,
            "rating": p.get("rating", 0),
            "score": int(p.get("score_half_points", 0)) / 2,
            "color_hist": ["white" if c == "W" else "black" for c in colours],
            "float_history": list(floats),
            "bye_count": byes,
        })
    return rounds, played + 1, engine_players, previous, ids


def check(rows, engine_players, previous, round_number, rounds):
    """Why the library's answer breaks an absolute rule, or None."""
    by_id = {p["id"]: p for p in engine_players}
    seen, byes = [], []
    for r in rows:
        if r.get("bye") or r.get("black_id") is None:
            byes.append(r["white_id"])
            seen.append(r["white_id"])
            continue
        w, b = r["white_id"], r["black_id"]
        seen += [w, b]
        if (min(w, b), max(w, b)) in previous:
            return f"rematch {by_id[w]['name']}-{by_id[b]['name']}"
        topscorer_exception = round_number >= rounds and any(
            by_id[x]["score"] > (round_number - 1) / 2 for x in (w, b))
        for x, colour in ((w, "white"), (b, "black")):
            h = by_id[x]["color_hist"] + [colour]
            diff = h.count("white") - h.count("black")
            if not topscorer_exception and (h[-3:] == [colour] * 3 or abs(diff) > 2):
                return f"{by_id[x]['name']} breaks the colour rules with {colour}"
    if sorted(seen) != sorted(by_id):
        return "a player left out or paired twice"
    if len(byes) > len(by_id) % 2:
        return f"{len(byes)} players left unpaired"
    if len(byes) != len(by_id) % 2:
        return "no bye with an odd number of players"
    if byes and by_id[byes[0]]["bye_count"] > 0:
        return f"a second 1-point bye for {by_id[byes[0]]['name']}"
    return None


def main():
    try:
        doc = json.load(sys.stdin)
        rounds, round_number, engine_players, previous, ids = parse(doc)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        fail(f"bad input: {e}", 2)
    if not engine_players:
        fail("no players")
    try:
        from caissify_pairings import __version__, generate_pairings
    except ImportError:
        fail(f"{PACKAGE} is not installed: pip install {PACKAGE}=={VERSION}", 2)
    if __version__ != VERSION:
        fail(f"{PACKAGE} {__version__} installed, the oracle is pinned to {VERSION}", 2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = generate_pairings(
                system="dutch",
                players=engine_players,
                previous_pairings=previous,
                round_number=round_number,
                total_rounds=rounds,
                bye_value=1.0,
                max_byes_per_player=1,
            )
    except Exception as e:  # the engine's own failure
        fail(f"the library failed: {type(e).__name__}: {e}")
    problem = check(rows, engine_players, previous, round_number, rounds)
    if problem:
        fail(f"no valid pairing: {problem}")
    name = lambda n: ids[n - 1]
    games = [[name(r["white_id"]), name(r["black_id"])]
             for r in rows if not (r.get("bye") or r.get("black_id") is None)]
    bye = next((name(r["white_id"]) for r in rows
                if r.get("bye") or r.get("black_id") is None), None)
    json.dump({"games": games, "bye": bye, "error": None}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
