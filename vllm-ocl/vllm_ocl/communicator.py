"""OclCommunicator: collectives between vLLM workers on ocl devices.

OpenCL has no collective library. vLLM's device groups are created with the
platform's dist_backend, "oclgloo" (torch_ocl.distributed): Gloo carrying ocl
tensors through host memory. DeviceCommunicatorBase already issues every
collective through torch.distributed on the device group, so nothing is
overridden; the class exists so the platform names its own communicator and a
faster path (shared-memory all-reduce between devices of one machine, as vLLM's
CPU communicator has) has one place to go.

Tensor parallelism 1 is what is tested. TP > 1 would need: one ocl device per
rank (POCL_DEVICES lists several on one CPU), the oclgloo groups (already
registered), and a check that vLLM's custom ops for TP (all-gather of logits,
reduce-scatter in the MLP) run on ocl; the throughput would be bounded by the
host round trip of every all-reduce.
"""

from vllm.distributed.device_communicators.base_device_communicator import DeviceCommunicatorBase


class OclCommunicator(DeviceCommunicatorBase):
    pass
