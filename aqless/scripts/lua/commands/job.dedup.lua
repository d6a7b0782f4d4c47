--[=[ job.dedup
  Args     jid (aqless's own: the dedup id the job was put with, see dedup.lua)
  Reads    ql:j:<jid>
  Writes   none
  Returns  the dedup id; nil when the job has none or does not exist
  Errors   'Job(): no jid provided'   InvalidArgumentError
]=]
Commands['job.dedup'] = function(D, now, jid)
  return Dedup.id_of(jid)
end
