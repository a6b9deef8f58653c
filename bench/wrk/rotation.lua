-- Rotating refresh tokens. Each wrk thread takes its share of TOKENS_FILE; a request presents a
-- token no other request holds, and its 200 gives back the successor (wrk calls response()
-- before that connection's next request()). A refused token is dropped: wrk counts it as non-2xx.
local started = 0

function setup(thread)
  started = started + 1
  thread:set("index", started)
end

function init(args)
  local all = {}
  for line in io.lines(os.getenv("TOKENS_FILE")) do all[#all + 1] = line end
  pool = {}
  for k = index, #all, tonumber(os.getenv("WRK_THREADS")) do pool[#pool + 1] = all[k] end
end

function request()
  local token = table.remove(pool) or "none-left"
  return wrk.format("POST", "/auth/refresh", { ["Content-Type"] = "application/json" }, '{"refresh_token":"' .. token .. '"}')
end

function response(status, headers, body)
  if status ~= 200 then return end
  local token = body:match('"refresh_token":"([^"]+)"')
  if token then pool[#pool + 1] = token end
end
