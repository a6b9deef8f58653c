-- A truncated JSON body: the 422 of the request body path.
wrk.method = "POST"
wrk.path = "/admin/auth/login"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"school_id":'
