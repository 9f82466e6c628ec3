-- live-moves.lua: a wrk script playing moves in prepared solo Four in a Row matches.
--
-- wrk -t2 -c8 -d10s -s bench/live-moves.lua http://127.0.0.1:PORT -- DATA.lua FIRST COUNT THREADS
--
-- DATA.lua is written by `live-bench prepare` (one "token match_id" pair per line); this run
-- uses the COUNT pairs from index FIRST (0-based), and THREADS must equal wrk's -t: thread k
-- takes every THREADS-th pair of that slice. Each match gets exactly three moves, in columns
-- "1", "4", "7": with three distinct, non-adjacent columns neither the player nor the CPU
-- (three discs at most) can win and no column can fill, so every move is legal whatever the
-- CPU replies. A thread visits its matches in round robin (all first moves, then all second
-- moves, then all third), so no two of its requests in flight hit one match as long as it has
-- many more matches than connections. (wrk calls the first thread's request() once more,
-- unsent, to check the script: that thread's first match only gets "4" and "7", legal too.)
-- A thread that runs out stops (wrk.thread:stop(); its last request, which wrk sends anyway, is
-- a harmless GET /healthz) and `done` reports it as exhausted: the run then understates the
-- rate; prepare more matches.
--
-- `done` prints one parseable line:
--   live-moves moves=.. seconds=.. moves_per_s=.. p50_ms=.. p99_ms=.. non2xx=.. errors=.. exhausted=..
-- moves counts 2xx answers; non2xx the others (the first one's status and body follow), and a
-- second line counts the 500s and 503s among them: `statuses: 500=.. 503=..`.

local COLUMNS = { "1", "4", "7" }
local threads = {}

function setup(thread)
   table.insert(threads, thread)
   thread:set("id", #threads)
end

function init(args)
   -- args[0] is the URL; ours follow `--`.
   local file, first, count, nthreads = args[1], tonumber(args[2]), tonumber(args[3]), tonumber(args[4])
   assert(file and first and count and nthreads, "usage: -- DATA.lua FIRST COUNT THREADS")
   local data = dofile(file)
   tokens, ids = {}, {}
   local index = 0
   for token, match_id in data:gmatch("(%S+) (%S+)\n") do
      if index >= first and index < first + count and (index - first) % nthreads == id - 1 then
         table.insert(tokens, token)
         table.insert(ids, match_id)
      end
      index = index + 1
   end
   assert(first + count <= index, string.format("%s holds %d pairs, the run wants %d..%d", file, index, first, first + count))
   sent, ok, bad, exhausted, first_bad = 0, 0, 0, 0, nil
   s500, s503 = 0, 0
end

function request()
   local n = #ids
   local pass = math.floor(sent / n)
   if pass >= #COLUMNS then
      exhausted = 1
      wrk.thread:stop()
      return wrk.format("GET", "/healthz")
   end
   local i = sent % n + 1
   sent = sent + 1
   return wrk.format("POST", "/v1/matches/" .. ids[i] .. "/moves", {
      ["Authorization"] = "Bearer " .. tokens[i],
      ["Content-Type"] = "application/json",
   }, '{"move":"' .. COLUMNS[pass + 1] .. '"}')
end

function response(status, headers, body)
   if exhausted == 1 then
      return
   end
   if status == 500 then s500 = s500 + 1 elseif status == 503 then s503 = s503 + 1 end
   if status >= 200 and status < 300 then
      ok = ok + 1
   else
      bad = bad + 1
      if not first_bad then
         first_bad = status .. " " .. string.sub(body or "", 1, 300)
      end
   end
end

function done(summary, latency, requests)
   local ok, bad, exhausted, first_bad = 0, 0, 0, nil
   local n500, n503 = 0, 0
   for _, thread in ipairs(threads) do
      n500 = n500 + thread:get("s500")
      n503 = n503 + thread:get("s503")
      ok = ok + thread:get("ok")
      bad = bad + thread:get("bad")
      exhausted = exhausted + thread:get("exhausted")
      first_bad = first_bad or thread:get("first_bad")
   end
   local moves = ok
   local seconds = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      "live-moves moves=%d seconds=%.2f moves_per_s=%.1f p50_ms=%.2f p99_ms=%.2f non2xx=%d errors=%d exhausted=%d\n",
      moves, seconds, moves / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
      bad, e.connect + e.read + e.write + e.timeout, exhausted))
   io.write(string.format("statuses: 500=%d 503=%d\n", n500, n503))
   if first_bad then
      io.write("live-moves first non-2xx: " .. first_bad .. "\n")
   end
end
