-- replays.lua: a wrk script reading the replays of finished matches, round robin.
--
-- wrk -t2 -c8 -d10s -s bench/replays.lua http://127.0.0.1:PORT -- DATA.lua THREADS
--
-- DATA.lua is written by `live-bench prepare --finished` (one "token match_id" pair per line);
-- THREADS must equal wrk's -t: thread k takes every THREADS-th pair and reads its matches'
-- replays (GET /v1/matches/{id}/replay, with the owner's token) in turn, again and again.
--
-- `done` prints one parseable line:
--   replays reads=.. seconds=.. reads_per_s=.. p50_ms=.. p99_ms=.. non2xx=.. errors=..
-- reads counts 2xx answers; non2xx the others (the first one's status and body follow).

local threads = {}

function setup(thread)
   table.insert(threads, thread)
   thread:set("id", #threads)
end

function init(args)
   local file, nthreads = args[1], tonumber(args[2])
   assert(file and nthreads, "usage: -- DATA.lua THREADS")
   local data = dofile(file)
   tokens, ids = {}, {}
   local index = 0
   for token, match_id in data:gmatch("(%S+) (%S+)\n") do
      if index % nthreads == id - 1 then
         table.insert(tokens, token)
         table.insert(ids, match_id)
      end
      index = index + 1
   end
   assert(#ids > 0, file .. " holds no pair for this thread")
   sent, ok, bad, first_bad = 0, 0, 0, nil
end

function request()
   local i = sent % #ids + 1
   sent = sent + 1
   return wrk.format("GET", "/v1/matches/" .. ids[i] .. "/replay", {
      ["Authorization"] = "Bearer " .. tokens[i],
   })
end

function response(status, headers, body)
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
   local ok, bad, first_bad = 0, 0, nil
   for _, thread in ipairs(threads) do
      ok = ok + thread:get("ok")
      bad = bad + thread:get("bad")
      first_bad = first_bad or thread:get("first_bad")
   end
   local seconds = summary.duration / 1e6
   local e = summary.errors
   io.write(string.format(
      "replays reads=%d seconds=%.2f reads_per_s=%.1f p50_ms=%.2f p99_ms=%.2f non2xx=%d errors=%d\n",
      ok, seconds, ok / seconds, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
      bad, e.connect + e.read + e.write + e.timeout))
   if first_bad then
      io.write("replays first non-2xx: " .. first_bad .. "\n")
   end
end
