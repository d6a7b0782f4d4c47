-- Tag bookkeeping: ql:t:<tag> (jids by tagging time) and the ql:tags usage counters.

local Tags = {}

-- The tags of a job or template, from the stored text ({} and [] both mean none).
function Tags.parse(text)
  if text == '[]' or text == '{}' then return {} end
  return string_list(decode_stored(text)) or {}
end

function Tags.on(jid, tag, now)
  call('ZADD', Keys.tag(tag), now, jid)
  call('ZINCRBY', Keys.tags(), 1, tag)
end

-- Classic decrements the counter; reqless drops a tag no job carries any more.
function Tags.off(D, jid, tag)
  call('ZREM', Keys.tag(tag), jid)
  if D.drop_unused_tags and call('EXISTS', Keys.tag(tag)) == 0 then
    call('ZREM', Keys.tags(), tag)
  else
    call('ZINCRBY', Keys.tags(), -1, tag)
  end
end

function Tags.all_off(D, jid, tags)
  for _, tag in ipairs(tags) do Tags.off(D, jid, tag) end
end

-- {"total": n, "jobs": [...]} for `tag get` / `jobs.tagged`.
function Tags.tagged(tag, offset, count)
  return {
    total = call('ZCARD', Keys.tag(tag)),
    jobs = call('ZRANGE', Keys.tag(tag), offset, offset + count - 1),
  }
end

-- Tags carried by at least two jobs, most used first.
function Tags.top(offset, count)
  return call('ZREVRANGEBYSCORE', Keys.tags(), '+inf', 2, 'LIMIT', offset, count)
end
