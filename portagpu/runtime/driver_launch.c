/* A lean kernel launcher for Triton kernels portagpu launches again and again.
 *
 * Triton's generated C launcher parses some twenty arguments per call (grid,
 * stream, function, metadata tuples, hooks, every kernel argument) before it
 * calls the driver. Here the kernel's parameters are packed once per compiled
 * kernel and call site (a prepared launch), and a call passes only what
 * varies: the stream, the values of the arguments the site does not fix (a
 * prepared launch: the tensors' addresses; portagpu.launch: every argument)
 * and, for launch_grid, the grid. A call copies the packed parameters, writes
 * the values into their slots and calls the driver's launch function.
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
    Py_ssize_t nvalues;
    uint64_t slots[MAX_SLOTS];
    Py_ssize_t value_slot[MAX_SLOTS]; /* -1: Triton compiled this value into the kernel */
    char value_kind[MAX_SLOTS];       /* p/u: unsigned, i: signed, f: float32, d: float64 */
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

/* prepare(driver, function, (gx, gy, gz), block, shared, slots: bytes, value_slots: tuple,
 * kinds: bytes) -> a capsule for launch(). The call's values go, in order, to
 * the slots value_slots names (-1: dropped), converted as kinds says. */
static PyObject *prepare(PyObject *self, PyObject *args) {
    PyObject *driver, *value_slots;
    unsigned long long function;
    unsigned gx, gy, gz, block, shared;
    const char *bytes, *kinds;
    Py_ssize_t nbytes, nkinds;
    if (!PyArg_ParseTuple(args, "OK(III)IIy#O!y#", &driver, &function, &gx, &gy, &gz, &block,
                          &shared, &bytes, &nbytes, &PyTuple_Type, &value_slots, &kinds, &nkinds))
        return NULL;
    Driver *bound = PyCapsule_GetPointer(driver, DRIVER_NAME);
    if (!bound)
        return NULL;
    Py_ssize_t nslots = nbytes / 8, nvalues = PyTuple_GET_SIZE(value_slots);
    if (nbytes % 8 || nslots > MAX_SLOTS || nvalues > MAX_SLOTS || nkinds != nvalues) {
        PyErr_SetString(PyExc_ValueError,
                        "at most 64 8-byte slots, 64 values, and one kind per value");
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
    prepared->nvalues = nvalues;
    memcpy(prepared->slots, bytes, (size_t)nbytes);
    for (Py_ssize_t i = 0; i < nvalues; i++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(value_slots, i));
        if (slot < -1 || slot >= nslots || !strchr("puifd", kinds[i])) {
            PyMem_Free(prepared);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a value's slot or kind is out of range");
            return NULL;
        }
        prepared->value_slot[i] = slot;
        prepared->value_kind[i] = kinds[i];
    }
    PyObject *capsule = PyCapsule_New(prepared, CAPSULE_NAME, free_prepared);
    if (!capsule)
        PyMem_Free(prepared);
    return capsule;
}

/* One value into its slot; 0 when it is not of its kind (the error is set). */
static int fill(uint64_t *slot, char kind, PyObject *value) {
    switch (kind) {
    case 'i': {
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred())
            return 0;
        memcpy(slot, &v, 8);
        return 1;
    }
    case 'f':
    case 'd': {
        double v = PyFloat_AsDouble(value);
        if (v == -1.0 && PyErr_Occurred())
            return 0;
        *slot = 0;
        if (kind == 'f') {
            float narrow = (float)v;
            memcpy(slot, &narrow, 4);
        } else {
            memcpy(slot, &v, 8);
        }
        return 1;
    }
    default: {
        unsigned long long v = PyLong_AsUnsignedLongLong(value);
        if (v == (unsigned long long)-1 && PyErr_Occurred())
            return 0;
        *slot = v;
        return 1;
    }
    }
}

static unsigned long long as_unsigned(PyObject *value) {
    return PyLong_Check(value) ? PyLong_AsUnsignedLongLong(value) : (unsigned long long)-1;
}

/* The launch itself: True once launched (or an empty grid, which Triton does
 * not launch either); False, having done nothing, where a value, the grid or
 * the stream is not what the prepared launch converts, or this thread has no
 * current context: the caller's general path runs the launch (and raises
 * Triton's own errors). Raises on a driver error. */
static PyObject *run(Prepared *prepared, const unsigned grid[3], PyObject *stream_object,
                     PyObject *const *values, Py_ssize_t nvalues) {
    if (nvalues != prepared->nvalues) {
        PyErr_Format(PyExc_TypeError, "launch takes %zd values, got %zd", prepared->nvalues,
                     nvalues);
        return NULL;
    }
    uint64_t slots[MAX_SLOTS];
    void *params[MAX_SLOTS];
    unsigned long long stream = as_unsigned(stream_object);
    if (stream == (unsigned long long)-1) {
        PyErr_Clear();
        Py_RETURN_FALSE;
    }
    memcpy(slots, prepared->slots, (size_t)prepared->nslots * 8);
    for (Py_ssize_t i = 0; i < nvalues; i++) {
        Py_ssize_t slot = prepared->value_slot[i];
        if (slot >= 0 && !fill(&slots[slot], prepared->value_kind[i], values[i])) {
            PyErr_Clear();
            Py_RETURN_FALSE;
        }
    }
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
        Py_RETURN_TRUE;
    for (Py_ssize_t i = 0; i < prepared->nslots; i++)
        params[i] = &slots[i];
    const Driver *driver = &prepared->driver;
    void *context = NULL;
    if (driver->context(&context) != 0 || context == NULL)
        Py_RETURN_FALSE;
    int status;
    Py_BEGIN_ALLOW_THREADS;
    status = driver->launch(prepared->function, grid[0], grid[1], grid[2], prepared->block, 1, 1,
                            prepared->shared, (void *)(uintptr_t)stream, params, NULL);
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

static Prepared *prepared_of(PyObject *capsule) {
    return PyCapsule_GetPointer(capsule, CAPSULE_NAME);
}

/* launch(prepared, stream, *values): on the prepared grid. */
static PyObject *launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2) {
        PyErr_SetString(PyExc_TypeError, "launch(prepared, stream, *values)");
        return NULL;
    }
    Prepared *prepared = prepared_of(args[0]);
    if (!prepared)
        return NULL;
    return run(prepared, prepared->grid, args[1], args + 2, nargs - 2);
}

/* launch_grid(prepared, gx, gy, gz, stream, *values): on the grid given. */
static PyObject *launch_grid(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 5) {
        PyErr_SetString(PyExc_TypeError, "launch_grid(prepared, gx, gy, gz, stream, *values)");
        return NULL;
    }
    Prepared *prepared = prepared_of(args[0]);
    if (!prepared)
        return NULL;
    unsigned grid[3];
    for (int i = 0; i < 3; i++) {
        unsigned long long dim = as_unsigned(args[1 + i]);
        if (dim > 0xFFFFFFFFull) { /* not an int, negative or too large: Triton's path says */
            PyErr_Clear();
            Py_RETURN_FALSE;
        }
        grid[i] = (unsigned)dim;
    }
    return run(prepared, grid, args[4], args + 5, nargs - 5);
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS, "bind(library, launch, context, error) -> a driver"},
    {"prepare", prepare, METH_VARARGS,
     "prepare(driver, function, grid, block, shared, slots, value_slots, kinds) -> a prepared "
     "launch"},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(prepared, stream, *values) -> True once launched, False for the general path"},
    {"launch_grid", (PyCFunction)(void (*)(void))launch_grid, METH_FASTCALL,
     "launch_grid(prepared, gx, gy, gz, stream, *values) -> as launch, on this grid"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "portagpu_driver_launch", NULL, -1,
                                    methods};

PyMODINIT_FUNC PyInit_portagpu_driver_launch(void) { return PyModule_Create(&module); }
