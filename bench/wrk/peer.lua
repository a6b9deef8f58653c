-- oidc-provider's token endpoint (bench/peer-server.mjs): refresh_token grants presenting the
-- tokens of TOKENS_FILE, each thread its share. ROTATION=on presents each answer's successor, as
-- rotation.lua does; MISSING=on leaves the refresh_token out (its 400).
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
  rotation = os.getenv("ROTATION") == "on"
  missing = os.getenv("MISSING") == "on"
  i = 0
end

function request()
  local body = "grant_type=refresh_token&client_id=bench"
  if not missing then
    local token
    if rotation then token = table.remove(pool) or "none-left" else i = i % #pool + 1; token = pool[i] end
    body = body .. "&refresh_token=" .. token
  end
  return wrk.format("POST", "/token", { ["Content-Type"] = "application/x-www-form-urlencoded" }, body)
end

function response(status, headers, body)
  if not rotation or status ~= 200 then return end
  local token = body:match('"refresh_token":"([^"]+)"')
  if token then pool[#pool + 1] = token end
end
