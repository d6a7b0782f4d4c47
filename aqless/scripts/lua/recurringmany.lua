-- Many recurring templates in one call (aqless's own), as job.getMulti reads many jobs.

--[=[ recurringJob.getMulti
  Args     jid...
  Reads    ql:r:<jid>
  Writes   none
  Returns  JSON list of the recurring objects of the templates that exist, in order ([]
           when none)
  Errors   none
]=]
function Recurring.get_many(D, jids)
  local found = {}
  for _, jid in ipairs(jids) do
    local object = Recurring.object(D, jid)
    if object ~= nil then found[#found + 1] = object end
  end
  return json_array(found)
end
