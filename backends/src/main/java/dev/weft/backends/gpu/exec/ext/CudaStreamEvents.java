package dev.weft.backends.gpu.exec.ext;

import dev.weft.backends.gpu.exec.CudaHandles;
import dev.weft.backends.gpu.nccl.StreamEvents;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.JCudaDriver;

/**
 * {@link StreamEvents} on the CUDA driver: events without timing, recorded and waited on by raw stream handles.
 * Holds no state, so one instance serves every stream of the process; an event belongs to the context current
 * when it was recorded.
 */
final class CudaStreamEvents implements StreamEvents {
    @Override
    public long record(long stream) {
        CUevent event = new CUevent();
        JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING);
        JCudaDriver.cuEventRecord(event, CudaHandles.stream(stream));
        return CudaHandles.raw(event);
    }

    @Override
    public void wait(long stream, long event) {
        JCudaDriver.cuStreamWaitEvent(CudaHandles.stream(stream), CudaHandles.event(event), 0);
    }

    @Override
    public void destroy(long event) {
        JCudaDriver.cuEventDestroy(CudaHandles.event(event));
    }
}
