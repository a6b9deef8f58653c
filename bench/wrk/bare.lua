-- The same POST as a refresh (a 43-character token), to bench/bare-server.mjs.
wrk.method = "POST"
wrk.path = "/auth/refresh"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"refresh_token":"' .. string.rep("x", 43) .. '"}'
