-- Correct passwords of the seeded admins (bench/lib/scenarios.mjs, ADMINS) in turn.
local i = 0

function request()
  i = i % 4 + 1
  local body = '{"school_id":"bench-school","username":"bench-admin-' .. i .. '","password":"bench-password-' .. i .. '-correct-horse"}'
  return wrk.format("POST", "/admin/auth/login", { ["Content-Type"] = "application/json" }, body)
end
