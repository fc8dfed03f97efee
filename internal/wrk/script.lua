-- topobench: wrk prints its latencies rounded to two decimals and only up to
-- p99. done() runs once after the report and adds exact figures (wrk's
-- microsecond resolution) as "topobench: key value" lines between
-- "topobench: begin 1" and "topobench: end 1"; wrk.Parse reads them.
-- Only done() is defined: request() or response() would slow wrk down.
done = function(summary, latency, requests)
  local out = {}
  local function put(k, v)
    out[#out + 1] = string.format("topobench: %s %s\n", k, v)
  end
  local function int(x) return string.format("%.0f", x) end
  put("begin", "1")
  put("duration_us", int(summary.duration))
  put("requests", int(summary.requests))
  put("bytes", int(summary.bytes))
  for _, k in ipairs({"connect", "read", "write", "status", "timeout"}) do
    put("errors_" .. k, int(summary.errors[k]))
  end
  -- With no samples wrk's minimum is its "unset" value (above the maximum).
  local min = latency.min
  if min > latency.max then min = 0 end
  put("latency_min_us", int(min))
  put("latency_mean_us", string.format("%.3f", latency.mean))
  put("latency_stdev_us", string.format("%.3f", latency.stdev))
  put("latency_max_us", int(latency.max))
  for _, p in ipairs({50, 75, 90, 99, 99.9, 99.99}) do
    put("latency_p" .. p .. "_us", int(latency:percentile(p)))
  end
  put("end", "1")
  io.write(table.concat(out))
end
