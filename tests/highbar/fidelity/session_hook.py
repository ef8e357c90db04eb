"""A session setup hook (highbar's own attach-mode test): a conversation id derived from the test id,
or with ``same`` the same id for every test (a session that cannot tell executions apart)."""

import json
import sys

print("opening a conversation...")
print(json.dumps({"conversation_id": 42 if sys.argv[1] == "same" else int(sys.argv[1][:8], 16)}))
