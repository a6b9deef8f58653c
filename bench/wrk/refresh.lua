-- Reusable refresh tokens, one after another from TOKENS_FILE (one per line).
local tokens = {}
local i = 0

function init(args)
  for line in io.lines(os.getenv("TOKENS_FILE")) do tokens[#tokens + 1] = line end
  i = math.random(#tokens)
end

function request()
  i = i % #tokens + 1
  return wrk.format("POST", "/auth/refresh", { ["Content-Type"] = "application/json" }, '{"refresh_token":"' .. tokens[i] .. '"}')
end
