"""Four NUTS chains on the 3-d Gaussian; run by the sharding test with 1 or 4 CPU devices.

Usage: python _sharded_worker.py OUT_NPZ — runs 20 draws without warmup and with 3 warmup
(adaptation) steps, writes both draws, prints backend_info's ``chain_devices`` as JSON.
"""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np
from _bjx_helpers import gauss_task, loop_for


def main() -> None:
    warnings.simplefilter("ignore")
    out, seen = {}, set()
    for warmup in (0, 3):
        task = gauss_task(num_warmup=warmup, num_samples=20, num_chains=4)
        op, info = loop_for(
            task, "nuts", options={"steps_per_call": 10}, log_every_n_steps=10
        ).run()
        out[f"warmup{warmup}"] = op.samples_by_chain["position"]
        seen.add((info["chain_devices"], len(info["devices"])))
    np.savez(sys.argv[1], **out)
    ((chain_devices, devices),) = seen
    print(json.dumps({"chain_devices": chain_devices, "devices": devices}))


if __name__ == "__main__":
    main()
