"""A session setup hook (highbar's own attach-mode test): a conversation id derived from the test id."""

import json
import sys

print("opening a conversation...")
print(json.dumps({"conversation_id": int(sys.argv[1][:8], 16)}))
