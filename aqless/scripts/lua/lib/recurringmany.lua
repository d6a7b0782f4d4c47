-- Many recurring templates in one call (aqless's own), as job.getMulti reads many jobs.

function Recurring.get_many(D, jids)
  local found = {}
  for _, jid in ipairs(jids) do
    local object = Recurring.object(D, jid)
    if object ~= nil then found[#found + 1] = object end
  end
  return json_array(found)
end
