"""Integrations with libraries that choose a device themselves.

Scripts written for the ocl device use these; a script written for CUDA
runs unchanged under ``torch_ocl.transfer_to_ocl`` instead.

    import torch_ocl.integrations.accelerate as ocl_accelerate
    ocl_accelerate.enable()      # before Accelerator / TrainingArguments
"""
