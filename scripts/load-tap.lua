-- wrk's side of scripts/load-tap: a gateway's mixed load on sessions made
-- beforehand (SESSIONS: a file of "session-id path" lines), each thread on
-- its own share of them. Per request, at random:
--   page-1 readers  tools/list without a cursor (id "r"), left there;
--   walkers         tools/list without a cursor (id "w:N"), then each
--                   nextCursor the answer carries, on the same session,
--                   to the last page;
--   DELETEs         the session ended (DELETE_SHARE of requests), and a
--                   fresh one made in its place (initialize, then its
--                   notifications/initialized): session churn.
-- DELAY_MS (default 0) paces each connection; the summary line is read by
-- scripts/load-tap.
local sessions, paths = {}, {}
local walks = {}          -- pending continuations: {index, cursor}
local fresh = {}          -- slots whose session was deleted: to make again
local initialised = {}    -- slots made again, awaiting notifications/initialized
-- Globals, so done() can read each thread's (thread:get).
c_list, c_walk_steps, c_deletes, c_inits, c_bad = 0, 0, 0, 0, 0
local delay_ms = tonumber(os.getenv("DELAY_MS") or "0")
local delete_share = tonumber(os.getenv("DELETE_SHARE") or "0.005")
local walk_share = tonumber(os.getenv("WALK_SHARE") or "0.2")
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  local n = tonumber(os.getenv("THREADS") or "1")
  local i = 0
  for line in io.lines(os.getenv("SESSIONS")) do
    local sid, path = line:match("^(%S+) (%S+)$")
    if sid and i % n == tid then
      table.insert(sessions, sid)
      table.insert(paths, path)
    end
    i = i + 1
  end
  math.randomseed(os.time() + tid)
end

local headers = {
  ["Content-Type"] = "application/json",
  ["Accept"] = "application/json, text/event-stream",
  ["Mcp-Protocol-Version"] = "2025-11-25",
}

local function post(path, sid, body)
  headers["Mcp-Session-Id"] = sid
  return wrk.format("POST", path, headers, body)
end

local function list(i, id, cursor)
  c_list = c_list + 1
  local params = cursor and ('{"cursor":"' .. cursor .. '"}') or "{}"
  return post(paths[i], sessions[i],
    '{"jsonrpc":"2.0","id":"' .. id .. '","method":"tools/list","params":' .. params .. '}')
end

function request()
  if #initialised > 0 then
    local i = table.remove(initialised)
    return post(paths[i], sessions[i], '{"jsonrpc":"2.0","method":"notifications/initialized"}')
  end
  if #fresh > 0 then
    local i = table.remove(fresh)
    c_inits = c_inits + 1
    headers["Mcp-Session-Id"] = nil
    return wrk.format("POST", paths[i], headers,
      '{"jsonrpc":"2.0","id":"i:' .. i .. '","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"churn-' .. (i % 40) .. '","version":"1.0"}}}')
  end
  if #walks > 0 and math.random() < 0.5 then
    local step = table.remove(walks, 1)
    c_walk_steps = c_walk_steps + 1
    return list(step[1], "w:" .. step[1], step[2])
  end
  local i = math.random(#sessions)
  local r = math.random()
  if r < delete_share then
    c_deletes = c_deletes + 1
    table.insert(fresh, i)
    headers["Mcp-Session-Id"] = sessions[i]
    return wrk.format("DELETE", paths[i], headers)
  elseif r < delete_share + walk_share then
    return list(i, "w:" .. i, nil)
  end
  return list(i, "r", nil)
end

function response(status, hdrs, body)
  if status >= 300 and status ~= 404 then
    c_bad = c_bad + 1
  end
  local init = body:match('"id":"i:(%d+)"')
  if init then
    local sid = hdrs["mcp-session-id"] or hdrs["Mcp-Session-Id"]
    if sid then
      sessions[tonumber(init)] = sid
      table.insert(initialised, tonumber(init))
    end
    return
  end
  local walker = body:match('"id":"w:(%d+)"')
  local cursor = body:match('"nextCursor":"([^"]*)"')
  if walker and cursor and #walks < 10000 then
    table.insert(walks, {tonumber(walker), cursor})
  end
end

function delay()
  return delay_ms
end

function done(summary, latency, requests)
  local sum = {list = 0, walk_steps = 0, deletes = 0, inits = 0, bad = 0}
  for _, t in ipairs(threads) do
    for k, _ in pairs(sum) do
      sum[k] = sum[k] + (t:get("c_" .. k) or 0)
    end
  end
  io.write(string.format(
    "RESULT requests=%d seconds=%.1f p50_us=%d p99_us=%d errors=%d list=%d walk_steps=%d deletes=%d inits=%d bad=%d\n",
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    summary.errors.connect + summary.errors.read + summary.errors.write
      + summary.errors.timeout, sum.list, sum.walk_steps, sum.deletes, sum.inits, sum.bad))
end
