-- Logins with correct passwords, one body after another from BODIES_FILE (one per line).
local bodies = {}
local i = 0

function init(args)
  for line in io.lines(os.getenv("BODIES_FILE")) do bodies[#bodies + 1] = line end
end

function request()
  i = i % #bodies + 1
  return wrk.format("POST", "/admin/auth/login", { ["Content-Type"] = "application/json" }, bodies[i])
end
