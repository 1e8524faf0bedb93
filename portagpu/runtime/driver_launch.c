/* A lean kernel launcher for launches worked out once (portagpu.prepare_launch).
 *
 * Triton's generated C launcher parses some twenty arguments per call (grid,
 * stream, function, metadata tuples, hooks, every kernel argument) before it
 * calls the driver. A prepared launch knows all of them but the tensors'
 * addresses and the stream, so this module keeps the packed parameters once,
 * per launch, and a call only copies them, writes the addresses into their
 * slots and calls the driver's launch function.
 *
 * Each kernel parameter lives in an 8-byte slot (little-endian, low bytes
 * first); the driver reads as many bytes from a slot as the parameter has.
 * The driver is bound at run time (dlopen), by names the vendor's backend
 * gives: its launch function must have cuLaunchKernel's signature (CUDA's
 * cuLaunchKernel, HIP's hipModuleLaunchKernel). No driver header is needed.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#define MAX_SLOTS 64
#define CAPSULE_NAME "portagpu.driver_launch"
#define DRIVER_NAME "portagpu.driver_launch.driver"

typedef int (*launch_fn)(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned shared, void *stream, void **params,
                         void **extra);
typedef int (*context_fn)(void **context);
typedef int (*error_fn)(int code, const char **text);

typedef struct {
    launch_fn launch;
    context_fn context;
    error_fn error;
} Driver;

typedef struct {
    Driver driver;
    void *function;
    unsigned grid[3];
    unsigned block;
    unsigned shared;
    Py_ssize_t nslots;
    Py_ssize_t nvarying;
    uint64_t slots[MAX_SLOTS];
    Py_ssize_t varying[MAX_SLOTS];
} Prepared;

static void free_driver(PyObject *capsule) {
    PyMem_Free(PyCapsule_GetPointer(capsule, DRIVER_NAME));
}

/* bind(library, launch, context, error) -> a driver capsule: dlopen the
 * library, look the three functions up. Nothing global: each prepared launch
 * keeps its driver's functions. */
static PyObject *bind(PyObject *self, PyObject *args) {
    const char *library, *launch_name, *context_name, *error_name;
    if (!PyArg_ParseTuple(args, "ssss", &library, &launch_name, &context_name, &error_name))
        return NULL;
    void *handle = dlopen(library, RTLD_LAZY | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        PyErr_Format(PyExc_OSError, "cannot open %s: %s", library, why ? why : "unknown error");
        return NULL;
    }
    Driver found = {(launch_fn)dlsym(handle, launch_name), (context_fn)dlsym(handle, context_name),
                    (error_fn)dlsym(handle, error_name)};
    if (!found.launch || !found.context || !found.error) {
        PyErr_Format(PyExc_OSError, "%s lacks %s, %s or %s", library, launch_name, context_name,
                     error_name);
        return NULL;
    }
    Driver *driver = PyMem_Malloc(sizeof(Driver));
    if (!driver)
        return PyErr_NoMemory();
    *driver = found;
    PyObject *capsule = PyCapsule_New(driver, DRIVER_NAME, free_driver);
    if (!capsule)
        PyMem_Free(driver);
    return capsule;
}

static void free_prepared(PyObject *capsule) {
    PyMem_Free(PyCapsule_GetPointer(capsule, CAPSULE_NAME));
}

/* prepare(driver, function, (gx, gy, gz), block, shared, slots: bytes, varying: tuple of
 * slot indices) -> a capsule for launch(). */
static PyObject *prepare(PyObject *self, PyObject *args) {
    PyObject *driver;
    unsigned long long function;
    unsigned gx, gy, gz, block, shared;
    const char *bytes;
    Py_ssize_t nbytes;
    PyObject *varying;
    if (!PyArg_ParseTuple(args, "OK(III)IIy#O!", &driver, &function, &gx, &gy, &gz, &block, &shared, &bytes,
                          &nbytes, &PyTuple_Type, &varying))
        return NULL;
    Driver *bound = PyCapsule_GetPointer(driver, DRIVER_NAME);
    if (!bound)
        return NULL;
    Py_ssize_t nslots = nbytes / 8, nvarying = PyTuple_GET_SIZE(varying);
    if (nbytes % 8 || nslots > MAX_SLOTS) {
        PyErr_SetString(PyExc_ValueError, "slots must be at most 64 8-byte values");
        return NULL;
    }
    Prepared *prepared = PyMem_Calloc(1, sizeof(Prepared));
    if (!prepared)
        return PyErr_NoMemory();
    prepared->driver = *bound;
    prepared->function = (void *)(uintptr_t)function;
    prepared->grid[0] = gx;
    prepared->grid[1] = gy;
    prepared->grid[2] = gz;
    prepared->block = block;
    prepared->shared = shared;
    prepared->nslots = nslots;
    prepared->nvarying = nvarying;
    memcpy(prepared->slots, bytes, (size_t)nbytes);
    for (Py_ssize_t i = 0; i < nvarying; i++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(varying, i));
        if (slot < 0 || slot >= nslots) {
            PyMem_Free(prepared);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a varying slot is out of range");
            return NULL;
        }
        prepared->varying[i] = slot;
    }
    PyObject *capsule = PyCapsule_New(prepared, CAPSULE_NAME, free_prepared);
    if (!capsule)
        PyMem_Free(prepared);
    return capsule;
}

/* launch(prepared, stream, *addresses): True once launched; False, having
 * done nothing, when this thread has no current context (the caller's
 * general path sets one up). Raises on a driver error. */
static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2) {
        PyErr_SetString(PyExc_TypeError, "launch(prepared, stream, *addresses)");
        return NULL;
    }
    Prepared *prepared = PyCapsule_GetPointer(args[0], CAPSULE_NAME);
    if (!prepared)
        return NULL;
    if (nargs - 2 != prepared->nvarying) {
        PyErr_Format(PyExc_TypeError, "launch takes %zd addresses, got %zd", prepared->nvarying,
                     nargs - 2);
        return NULL;
    }
    uint64_t slots[MAX_SLOTS];
    void *params[MAX_SLOTS];
    unsigned long long stream = PyLong_AsUnsignedLongLong(args[1]);
    if (stream == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    memcpy(slots, prepared->slots, (size_t)prepared->nslots * 8);
    for (Py_ssize_t i = 0; i < prepared->nvarying; i++) {
        unsigned long long address = PyLong_AsUnsignedLongLong(args[2 + i]);
        if (address == (unsigned long long)-1 && PyErr_Occurred())
            return NULL;
        slots[prepared->varying[i]] = address;
    }
    for (Py_ssize_t i = 0; i < prepared->nslots; i++)
        params[i] = &slots[i];
    void *context = NULL;
    const Driver *driver = &prepared->driver;
    if (driver->context(&context) != 0 || context == NULL)
        Py_RETURN_FALSE;
    int status;
    Py_BEGIN_ALLOW_THREADS;
    status = driver->launch(prepared->function, prepared->grid[0], prepared->grid[1],
                           prepared->grid[2], prepared->block, 1, 1, prepared->shared,
                           (void *)(uintptr_t)stream, params, NULL);
    Py_END_ALLOW_THREADS;
    if (status != 0) {
        const char *text = NULL;
        if (driver->error(status, &text) != 0 || text == NULL)
            text = "unknown error";
        PyErr_Format(PyExc_RuntimeError, "kernel launch failed: driver error %d: %s", status, text);
        return NULL;
    }
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS, "bind(library, launch, context, error) -> a driver"},
    {"prepare", prepare, METH_VARARGS,
     "prepare(driver, function, grid, block, shared, slots, varying) -> a prepared launch"},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(prepared, stream, *addresses) -> True, or False without a current context"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "portagpu_driver_launch", NULL, -1,
                                    methods};

PyMODINIT_FUNC PyInit_portagpu_driver_launch(void) { return PyModule_Create(&module); }
