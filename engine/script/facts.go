// Package script scans Python training scripts with tree-sitter and
// extracts the facts that stepdoctor's script rules (category "script" in
// package rules) evaluate: DataLoader construction, training and
// evaluation loops and the calls inside them, optimizers, mixed precision,
// cuDNN autotuning, torch.compile / torch.jit.script, DataParallel versus
// DistributedDataParallel, and torch.profiler setup. Every fact carries
// its source position (1-based line, 1-based column in Unicode code
// points).
//
// Names are resolved through the script's imports, so
// `from torch.utils.data import DataLoader as DL; DL(ds)` and
// `import torch.nn.functional as F` are both seen under their canonical
// dotted names (torch.utils.data.DataLoader, torch.nn.functional.relu).
//
// A script with syntax errors still yields the facts of the parts
// tree-sitter could parse, plus one Diagnostic per error region; Scan
// never panics on any input.
//
// Imports of modules in the script's own directory are resolved when it is
// scanned with ScanFile (classes: Modules, small models, in-memory datasets),
// and the modules of that directory that import it tell whether it runs on
// a GPU (Features.GPUHints).
//
// The scanner is syntactic. It follows calls from a step loop into the
// module-level functions of the same script (up to 3 calls deep), and
// treats a LightningModule's training_step as a step body (see Loop.Function);
// it does not follow methods, imported functions or calls through
// variables, and it cannot know a variable's type (a `print(x)` argument is
// "tensor-like" when it was assigned from a call in the loop, or passed in
// from one).
package script

// SchemaVersion versions the JSON shape of Facts (the input of script rules).
const SchemaVersion = 1

// Pos is a source range: Line and Column (1-based; Column counts Unicode
// code points) of the first character, EndLine and EndColumn of the
// character after the last.
type Pos struct {
	Line      int `json:"line"`
	Column    int `json:"column"`
	EndLine   int `json:"end_line"`
	EndColumn int `json:"end_column"`
}

// Value is one argument of a call as written: a keyword argument, a
// positional argument mapped to its parameter name, or absent.
type Value struct {
	// Present is false when the argument was not passed (the callee's
	// default applies).
	Present bool `json:"present"`
	// Kind is "bool", "int", "float", "string" or "none" for literals,
	// "name" for a variable or attribute (x, args.workers), "expr" for
	// anything else; "" when absent.
	Kind string `json:"kind"`
	// Value is the literal's value (bool, number, string) for literal
	// kinds, null otherwise.
	Value any `json:"value"`
	// Text is the argument's source text, cut to 80 characters.
	Text string `json:"text"`
	// Default is, for a name that reads a command-line option
	// (args.num_workers), the literal default its argparse add_argument
	// call gives (0, true, "cpu"); null when unknown. Filled for the
	// DataLoader arguments.
	Default any `json:"default,omitempty"`
	Pos
}

// Call is one call expression.
type Call struct {
	// Name is the callee's canonical dotted name when it resolves through
	// the imports or is a builtin ("torch.cuda.synchronize", "print");
	// for a method call on a value it is "." plus the method name
	// (".item", ".to", ".zero_grad").
	Name string `json:"name"`
	// Receiver is the source text of a method call's receiver ("loss",
	// "x"), cut to 80 characters; "" for plain calls.
	Receiver string `json:"receiver"`
	// ReceiverCall is the canonical name of the call a method is invoked
	// on, as in torch.zeros(3).cuda() (ReceiverCall "torch.zeros");
	// "" when the receiver is not a call.
	ReceiverCall string `json:"receiver_call"`
	// ReceiverKeywords lists the keyword names of that receiver call
	// ("device", "dtype").
	ReceiverKeywords []string `json:"receiver_keywords"`
	// ReceiverAssigned is, for .to / .cuda / .type_as called on a bare
	// name, the canonical name of the call one of the 32 statements before
	// it in its block last assigned to that name (z = torch.randn(n, d);
	// z = z.to(device): "torch.randn"); "" otherwise, and when that call
	// was given device=.
	ReceiverAssigned string `json:"receiver_assigned"`
	// ReceiverOrigin is, for .to / .cuda / .type_as called on a name or a
	// subscript of one (x, x[idx]), the call whose value was last assigned
	// to that name before it: in its block or, before the statement that
	// holds that block, in an enclosing one (assignedBack statements at
	// each level, up to the def). X = X.to(device) before a loop makes
	// X[idx].to(device) in it no copy at all. Null when no call is found.
	ReceiverOrigin *Origin `json:"receiver_origin"`
	// ReceiverVaries is, for .to / .cuda / .type_as whose receiver is a
	// call (chained) or a name an earlier statement of the block last
	// assigned a call to (as ReceiverAssigned reads it), true when that
	// call's data (its first positional argument, or data=) names
	// something the innermost loop around binds: the loop's target or a
	// name assigned in its body (obs, reward = env.step(action); then
	// torch.tensor(reward).to(device)). Such values change every pass, so
	// they cross the bus every pass whatever the tensor is made with. A
	// list or tuple literal (torch.tensor([x.shape[1]])) does not count:
	// Python numbers are made on the device by a fill (torch.full(...,
	// device=)) with no copy.
	ReceiverVaries bool `json:"receiver_varies"`
	// DeviceArg is true when the first positional argument is a name (x,
	// self.x) that every assignment gives a torch.device(...) of anything
	// but a "cpu" or "meta" string (dev = torch.device("cuda")), or a
	// "cuda..." string, alone or as a branch of a conditional (dev =
	// "cuda" if torch.cuda.is_available() else "cpu"): .to(dev) moves to
	// a device its name does not say.
	DeviceArg bool `json:"device_arg"`
	// Args are the positional arguments in order.
	Args []Value `json:"args"`
	// Keywords maps keyword argument names to their values.
	Keywords map[string]Value `json:"keywords"`
	// KwargsSplat is true when the call passes **kwargs (its keyword
	// arguments are then not fully known).
	KwargsSplat bool `json:"kwargs_splat"`
	// Loop is the index in Facts.Loops of the innermost enclosing loop,
	// -1 when none.
	Loop int `json:"loop"`
	// StepLoop is the index in Facts.Loops of the innermost enclosing
	// step loop (see Loop.Step), -1 when none.
	StepLoop int `json:"step_loop"`
	// StepRoot is the Root of StepLoop (see Loop.Root): the same for a
	// call in a step loop and one in a step function it calls; -1 when
	// StepLoop is.
	StepRoot int `json:"step_root"`
	// InnerLoop is true when a loop lies between the call and its step
	// loop (the call runs several times per step).
	InnerLoop bool `json:"inner_loop"`
	// Conditional is true when an if / elif / else or a conditional
	// expression lies between the call and its step loop (for example
	// logging every N steps).
	Conditional bool `json:"conditional"`
	// Branch is true when an if / elif / else branch, a conditional
	// expression, an except or match case, a lambda or a boolean operator
	// (a and b()) lies between the call and its innermost loop (its def or
	// the module when in no loop), step loop or not: it may not run on
	// every pass.
	Branch bool `json:"branch"`
	// Guard is the index in Facts.Conditions of the innermost if / elif
	// whose branch (body or else) holds the call, within its step loop;
	// -1 when none does (outside step loops, or under a conditional
	// expression, whose test is not a Condition).
	Guard int `json:"guard"`
	// NoGrad is true when the call is made with autograd off: inside a
	// `with torch.no_grad()` (inference_mode, set_grad_enabled(False))
	// block or a def decorated with one (`with torch.no_grad():
	// evaluate(model, loader)` turns it off for evaluate's loop).
	NoGrad bool `json:"no_grad"`
	// Accumulates is true when the call is the value of an assignment
	// whose target also appears among its arguments (x = torch.cat([x, y])).
	Accumulates bool `json:"accumulates"`
	// TensorArgs lists the argument names (also inside f-strings) that
	// were assigned from a call, or are loop targets, in the enclosing
	// step loop: likely tensors.
	TensorArgs []string `json:"tensor_args"`
	// Tensors lists the positional arguments (source text) that are
	// tensors by a stricter guess than TensorArgs (see Condition.Tensors):
	// the x of float(x) / int(x) / bool(x).
	Tensors []string `json:"tensors"`
	// OnModule is true when the receiver of a method call is an
	// nn.Module, not a tensor: a name assigned from a torch.nn.* or
	// torchvision.models.* constructor or from a class of this file that
	// subclasses a Module, a name like model / net / generator, or a
	// receiver whose result goes on to .train(), .eval() or .parameters().
	OnModule bool `json:"on_module"`
	// FrameworkDevice is true for x.to(<fw>.device) where <fw> is an
	// accelerate Accelerator or a Lightning Fabric whose prepare() /
	// setup_dataloaders() the script calls: the prepared DataLoader already
	// places batches on the device, so the copy is a no-op.
	FrameworkDevice bool   `json:"framework_device"`
	Text            string `json:"text"` // source text, cut to 80 characters
	Pos
}

// Condition is the condition of an if / elif / while statement inside a
// step loop (the header of a while step loop included). Python evaluates
// it as a bool, so a tensor in it is copied to the host: a sync.
type Condition struct {
	Kind string `json:"kind"` // "if", "elif" or "while"
	Text string `json:"text"` // the condition's source text, cut to 80 characters
	// Tensors lists the parts of the condition (source text) that are
	// turned into a Python bool and are tensors by a stricter guess than
	// Call.TensorArgs: names assigned in the step loop from torch.* calls,
	// from a call of a model, criterion or loss (by its name), from tensor
	// methods or arithmetic on such names, and the targets of a loop over a
	// DataLoader (not enumerate's index). Operands of is / in and the
	// arguments of other calls (len(x)) are not counted.
	Tensors []string `json:"tensors"`
	// Skips is true for an `if` whose body starts with `continue`: the rest
	// of the loop body runs only when the condition is false.
	Skips bool `json:"skips"`
	// Assigned is, for a condition that is a bare name, the source text
	// (cut to 80 characters) of the value one of the 32 statements before
	// the if, in its block, last assigned to it (update = (i + 1) % k ==
	// 0); "" otherwise.
	Assigned string `json:"assigned"`
	// Loop, StepLoop, StepRoot, InnerLoop and Conditional are as for Call (for a
	// while step loop's own header, StepLoop is that loop).
	Loop        int  `json:"loop"`
	StepLoop    int  `json:"step_loop"`
	StepRoot    int  `json:"step_root"`
	InnerLoop   bool `json:"inner_loop"`
	Conditional bool `json:"conditional"`
	Pos
}

// Loop is a for or while statement, or a step function: a function whose
// body runs once per step (see Function).
type Loop struct {
	Kind string `json:"kind"` // "for", "while" or "function"
	// Iter is the source text of what a for loop iterates over, after
	// unwrapping enumerate(), tqdm(), iter(), zip() and a MetricLogger's
	// log_every() (first argument);
	// a while loop's condition.
	Iter string `json:"iter"`
	// Trips is how many times a for loop over range(...) runs when its
	// bounds are known: integer literals, module-level names assigned one
	// integer literal, the defaults of command-line options that the
	// script never assigns (range(args.epochs), range(1, opt.nEpochs +
	// 1)), and + - * and unary minus of those; 0 when unknown.
	Trips int64 `json:"trips"`
	// Runs is how many times the loop's body runs in its def or module:
	// its Trips times the Runs of the loops around it; 0 when any is
	// unknown (and for step functions).
	Runs int64 `json:"runs"`
	// OverLoader is true when Iter names a variable assigned from a
	// DataLoader(...) call, or a name containing "loader"; for a while
	// loop, when its body draws batches with next() from such a loader or
	// an iterator over one (next(it) after it = iter(loader)).
	OverLoader bool `json:"over_loader"`
	// Trains is true when the loop body calls .backward(),
	// torch.autograd.backward() or an optimizer's .step() outside any
	// nested loop (an optimizer: a name assigned from torch.optim.*,
	// GradScaler, or containing "opt" or "scaler", also indexed as in
	// optimizers[0].step()).
	Trains bool `json:"trains"`
	// Step is true for a training or evaluation step loop: OverLoader or
	// Trains.
	Step bool `json:"step"`
	// Eval is true for a step loop that does not train and runs without
	// autograd or for evaluation: inside `with torch.no_grad()`,
	// `torch.inference_mode()` or `torch.set_grad_enabled(False)`, in a
	// function decorated with @torch.no_grad() or @torch.inference_mode(),
	// or in a function named for evaluation (validate, evaluate, test_*,
	// predict, ...). What runs there is not part of the training step.
	Eval bool `json:"eval"`
	// NoGrad is true when autograd is off for the loop's body: inside
	// `with torch.no_grad()`, `torch.inference_mode()` or
	// `torch.set_grad_enabled(False)`, in a def decorated with
	// @torch.no_grad() or @torch.inference_mode(), or with such a block
	// among the body's statements (around the forward). A block around
	// the call of the def that holds the loop is not seen here: see
	// Call.NoGrad.
	NoGrad bool `json:"no_grad"`
	// Forward is true when the body (nested loops included, defs not)
	// runs a model's forward: calls a name like model / net / encoder
	// (self.model too) or its .forward. Methods such as model.generate()
	// (which Hugging Face runs under no_grad itself) do not count.
	Forward bool `json:"forward"`
	// UsesGrad is true when the body (nested loops included, defs not)
	// reads gradients: .backward(), .grad, requires_grad(_), or calls
	// torch.autograd.* (saliency maps, adversarial examples): autograd
	// must stay on there.
	UsesGrad bool `json:"uses_grad"`
	// CallsModel is true when the body calls a model (a callee or
	// receiver named like model / net / decoder, or self(...)) outside
	// nested loops and functions: in a loop that is not a step loop, this
	// is autoregressive decoding.
	CallsModel bool `json:"calls_model"`
	// Parent is the index of the enclosing loop, -1 when none; for a step
	// function, the step loop (or step function) that calls it.
	Parent int `json:"parent"`
	// Function is, for Kind "function", the function's name: a
	// module-level function of the script called by name from a step loop
	// (or from another step function, up to 3 calls deep), or the
	// training_step of a LightningModule, which Lightning's Trainer calls
	// once per batch, or a transformers Trainer subclass's compute_loss /
	// training_step. Its Pos is the def header.
	Function string `json:"function,omitempty"`
	// Framework names the framework that calls a step hook once per step
	// ("Lightning" for LightningModule.training_step, "the Trainer" for a
	// transformers Trainer subclass's compute_loss / training_step); ""
	// for a function called from the script's own step loop.
	Framework string `json:"framework,omitempty"`
	// CallLine is the line of the call from Parent; 0 for a step hook.
	CallLine int `json:"call_line,omitempty"`
	// Root is, for a step function, the step loop every iteration of which
	// runs it (Parent followed up through step functions); a
	// LightningModule's training_step is its own root, as is every for and
	// while loop. Rules group a step's syncs and copies by it.
	Root int `json:"root"`
	Pos
	depth int // step functions: calls from the step loop (1 = called from it)
}

// DataLoader is one torch.utils.data.DataLoader(...) construction.
type DataLoader struct {
	// Var is the name the loader is assigned to ("train_loader"), "" when
	// not assigned to a plain name.
	Var string `json:"var"`
	// OnSelf is true when the loader is assigned to an attribute of self
	// (self.train_loader = DataLoader(...); Var is then "train_loader").
	OnSelf            bool  `json:"on_self"`
	BatchSize         Value `json:"batch_size"`
	NumWorkers        Value `json:"num_workers"`
	PinMemory         Value `json:"pin_memory"`
	PersistentWorkers Value `json:"persistent_workers"`
	PrefetchFactor    Value `json:"prefetch_factor"`
	// KwargsSplat is true when **kwargs is passed: absent arguments may
	// be set there.
	KwargsSplat bool `json:"kwargs_splat"`
	// InMemory names why the dataset is already in memory, so that
	// worker processes would only slice tensors: "TensorDataset", "a
	// tokenized dataset" (a datasets .map() result, or built from a
	// tokenizer), "a synthetic random dataset" (a class named Random...),
	// "a demo dataset held in memory" (lightning's WikiText2), "a class
	// whose __getitem__ returns self.<x>[i]"; "" otherwise.
	InMemory string `json:"in_memory"`
	// Eval is true for an evaluation loader: assigned to a name, or built
	// in a function named with val / eval / test / predict (and not
	// train).
	Eval bool `json:"eval"`
	// Tokens is true when the batches are token ids, a few kilobytes of
	// integers a batch: a tokenized dataset, lightning's WikiText2 demo, a
	// Random*Token*Dataset class, a dataset class named for tokens
	// (TokenDataset), or one built from input_ids or tokens
	// (TensorDataset(enc["input_ids"], ...)).
	Tokens bool `json:"tokens"`
	// OneBatch is true when the loader is built to draw one batch,
	// next(iter(DataLoader(...))), as for a visualisation.
	OneBatch bool `json:"one_batch"`
	// LiveSource is true when the dataset is an IterableDataset of this
	// file fed from state the training process mutates (a replay buffer,
	// an environment rollout method: self.<attr>): worker processes would
	// sample stale copies of it.
	LiveSource bool `json:"live_source"`
	Pos
}

// Optimizer is one torch.optim.<Name>(...) construction.
type Optimizer struct {
	Name        string `json:"name"` // canonical, "torch.optim.AdamW"
	Var         string `json:"var"`
	Foreach     Value  `json:"foreach"`
	Fused       Value  `json:"fused"`
	KwargsSplat bool   `json:"kwargs_splat"`
	// SmallModel says why the model whose .parameters() the optimizer
	// updates is small: built (through its assignments, .to() / .cuda()
	// and DDP wrappers) from at most 8 nn.Linear layers, each with a known
	// size (an integer literal, or a parameter's integer default) and none
	// wider than 1024, and parameter-free layers (activations, dropout,
	// Sequential), directly or in a Module class of this file or of a
	// module of its directory it imports. "" when not known.
	SmallModel string `json:"small_model"`
	Pos
}

// Profiler is one torch.profiler.profile(...) (or the legacy
// torch.autograd.profiler.profile) construction.
type Profiler struct {
	Name           string `json:"name"` // canonical callee
	Var            string `json:"var"`  // `with profile(...) as prof` or `prof = profile(...)`
	Schedule       Value  `json:"schedule"`
	OnTraceReady   Value  `json:"on_trace_ready"`
	ProfileMemory  Value  `json:"profile_memory"`
	WithStack      Value  `json:"with_stack"`
	RecordShapes   Value  `json:"record_shapes"`
	KwargsSplat    bool   `json:"kwargs_splat"`
	TraceHandler   bool   `json:"trace_handler"`   // on_trace_ready uses tensorboard_trace_handler
	ExportsTrace   bool   `json:"exports_trace"`   // <var>.export_chrome_trace(...) is called somewhere
	CallsStep      bool   `json:"calls_step"`      // <var>.step() is called somewhere
	WrapsLoop      bool   `json:"wraps_loop"`      // the with block contains a loop
	WrapsStepLoop  bool   `json:"wraps_step_loop"` // ... a step loop
	StepLoopInside int    `json:"step_loop"`       // index of the first step loop in the with block, -1 when none
	Pos
}

// Use is one occurrence of an API the rules look for.
type Use struct {
	Name string `json:"name"` // canonical name, or the assigned attribute
	// Value is the assigned value for attribute assignments
	// (torch.backends.cudnn.benchmark = True); absent for calls.
	Value Value `json:"value"`
	// InBranch is true for a cudnn or determinism setting made inside an
	// if / else of its function or module (if args.seed is not None:),
	// so some runs do without it.
	InBranch bool `json:"in_branch,omitempty"`
	Pos
}

// Features lists where the script uses the APIs that change how fast it
// runs. Every list is empty, never null, when the API is not used.
type Features struct {
	Autocast       []Use `json:"autocast"`        // torch.autocast, torch.amp.autocast, torch.cuda.amp.autocast
	GradScaler     []Use `json:"grad_scaler"`     // torch.amp.GradScaler, torch.cuda.amp.GradScaler
	CudnnBenchmark []Use `json:"cudnn_benchmark"` // assignments to torch.backends.cudnn.benchmark
	// Deterministic are requests for deterministic kernels: assignments to
	// torch.backends.cudnn.deterministic and torch.use_deterministic_algorithms
	// calls (Value: the flag, first argument).
	Deterministic []Use `json:"deterministic"`
	Compile       []Use `json:"compile"`       // torch.compile
	JitScript     []Use `json:"jit_script"`    // torch.jit.script, torch.jit.trace
	DataParallel  []Use `json:"data_parallel"` // torch.nn.DataParallel
	DDP           []Use `json:"ddp"`           // torch.nn.parallel.DistributedDataParallel, FSDP
	Conv          []Use `json:"conv"`          // torch.nn.Conv1d/2d/3d, torchvision.models.*
	CUDA          []Use `json:"cuda"`          // .cuda(), torch.cuda.*(...), "cuda" devices, Trainer / Fabric(accelerator="gpu" or "cuda"), accelerate Accelerator(mixed_precision="fp16")
	// Frameworks are accelerate Accelerator / PartialState and Lightning
	// Fabric / Trainer constructions: they pick the GPU themselves.
	Frameworks []Use `json:"frameworks"`
	// Accelerator are torch.accelerator.* calls (is_available,
	// current_accelerator, ...): the script runs on whatever accelerator
	// is present.
	Accelerator []Use `json:"accelerator"`
	// GPUHints are signs that the script runs on a GPU which say nothing
	// of the model or its precision: init_process_group("nccl") (the
	// backend runs only on CUDA GPUs), and a module of the same directory
	// that imports this one and uses a GPU (Name "imported by <file>",
	// at the import's position in that file). Host-sync and copy rules
	// count them; rules about the model's setup need a GPU use in the file.
	GPUHints []Use `json:"gpu_hints"`
	// CPUOnly are framework constructions pinned to the CPU: a Lightning
	// Trainer / Fabric with accelerator="cpu", an accelerate Accelerator
	// with cpu=True. Rules about GPU work do not run on such a script.
	CPUOnly []Use `json:"cpu_only"`
	// MixedPrecision is where reduced precision comes from other than
	// autocast: Accelerator(mixed_precision=...), Fabric(precision=...),
	// Trainer(precision=...) (not "32" / "64"), and a model cast to
	// bfloat16 / float16 (.half(), .bfloat16(), .to(dtype=torch.bfloat16)).
	MixedPrecision []Use `json:"mixed_precision"`
	// GradWrites are assignments to a tensor's .grad (p.grad = ...,
	// p.grad += g, p.grad /= n): code that relies on the gradients being
	// tensors after zero_grad() (set_to_none=False). Name is the target.
	GradWrites []Use `json:"grad_writes"`
	// GradSyncSwitches are references to the switches that skip the
	// gradient all-reduce of DDP, FSDP or a framework on the micro-batches
	// that do not step, called or not (ctx = model.no_sync if ... else
	// nullcontext): the attributes no_sync, no_backward_sync, accumulate,
	// set_requires_gradient_sync and require_backward_grad_sync (Name).
	GradSyncSwitches []Use `json:"grad_sync_switches"`
	// ManualAttention are softmax calls of attention written out by hand
	// in a def: softmax over scores from a product with a transposed
	// operand (q @ k.transpose(-2, -1), an einsum contracting both inputs'
	// last index), whose result is multiplied again (att @ v), directly
	// or through names assigned from it (masked_fill, dropout). Name is
	// the softmax's canonical name, at the softmax call.
	ManualAttention []Use `json:"manual_attention"`
	// FusedAttention are the places that name a fused attention kernel,
	// called or not: scaled_dot_product_attention (also in a string, as
	// getattr(F, "scaled_dot_product_attention") has it), flex_attention,
	// flash_attn_func and its variants, memory_efficient_attention, and
	// Hugging Face's dispatch (ALL_ATTENTION_FUNCTIONS,
	// _attn_implementation). Name is the canonical name where it
	// resolves, else the text.
	FusedAttention []Use `json:"fused_attention"`
}

// Ignore is one `# stepdoctor: ignore[rule-id, ...] reason` comment.
type Ignore struct {
	Rules  []string `json:"rules"`
	Reason string   `json:"reason"`
	// Standalone is true when the comment is alone on its line (it then
	// applies to the next line as well as its own).
	Standalone bool `json:"standalone"`
	Pos
}

// Import is one imported name: Local is the name bound in the script,
// Name the canonical dotted name it stands for.
type Import struct {
	Local string `json:"local"`
	Name  string `json:"name"`
	Pos
}

// Diagnostic is a problem the scanner met: a syntax error region (the
// facts inside it are missing) or an unreadable file.
type Diagnostic struct {
	Kind string `json:"kind"` // "syntax-error", "missing"
	// Node is the tree-sitter node behind the diagnostic: "ERROR" (tokens
	// the grammar could not place) or "MISSING <kind>" (a token tree-sitter
	// inserted to recover, as in MISSING ":").
	Node string `json:"node"`
	// Near is the source text of the region (for MISSING, the text just
	// before the missing token), cut to 60 characters.
	Near    string `json:"near"`
	Message string `json:"message"`
	Pos
}

// MaxScriptBytes is the largest script lint reads, and the largest module
// beside it read to resolve an import. Hand-written training scripts are
// tens of kilobytes; scanning costs about 0.5 GB of memory per MiB of
// source (a 1.9 MB file of plain assignments took 941 MB and 20 s), so a
// larger file, generated code or data, is refused instead.
const MaxScriptBytes = 1 << 20

// Facts is everything the scanner extracts from one script: the input of
// script rules. Lists are empty, never null; indexes (Call.Loop, ...)
// point into Loops.
type Facts struct {
	SchemaVersion int          `json:"schema_version"`
	File          string       `json:"file"` // path as given
	Lines         int          `json:"lines"`
	Imports       []Import     `json:"imports"`
	Loops         []Loop       `json:"loops"`
	Calls         []Call       `json:"calls"`
	Conditions    []Condition  `json:"conditions"`
	DataLoaders   []DataLoader `json:"dataloaders"`
	Optimizers    []Optimizer  `json:"optimizers"`
	Profilers     []Profiler   `json:"profilers"`
	Features      Features     `json:"features"`
	Ignores       []Ignore     `json:"ignores"`
	Functions     []Function   `json:"functions"`
	Diagnostics   []Diagnostic `json:"diagnostics"`
	// Source is the script's text, for renderers that quote lines
	// (fingerprints, snippets); not part of the rule input.
	Source []byte `json:"-"`
}

// Origin is the call a name was last assigned from, with its arguments as
// written (the fields of Call that the rules' device tests read).
type Origin struct {
	Name     string           `json:"name"`
	Args     []Value          `json:"args"`
	Keywords map[string]Value `json:"keywords"`
	Pos
}

// Function is a def in the script: its name, the line Python reports as
// the code object's first line (the first decorator, else the def) and the
// last line. Traces recorded with_stack name Python frames
// "file(first line): name", which is how trace hot spots map back here.
type Function struct {
	Name string `json:"name"`
	// Params are the parameter names in order (self included).
	Params []string `json:"params"`
	// Iterates are the parameters a for loop in the function (nested defs
	// included) iterates, or that it hands on to a function of the script
	// that does (one call deep), sorted; a DataLoader passed in them is
	// looped over at every call. A method (first parameter self) lists
	// the attributes of self it loops over the same way, directly or in a
	// method it calls on self ("self.train_loader"), and any function the
	// names it loops over that it neither takes nor assigns, read from
	// the module or an enclosing def (a trainloader built at module level
	// and looped over in train(epoch)), directly or in a function it
	// calls.
	Iterates []string `json:"iterates"`
	Line     int      `json:"line"`
	EndLine  int      `json:"end_line"`
	// Module is, for a function of a module in the script's directory that
	// the script imports (from engine import train_one_epoch, or import
	// engine) and that loops over a parameter, that module's file name;
	// Name is then as the script's calls resolve it
	// ("engine.train_one_epoch"), Line and EndLine are 0 (its lines are in
	// Module), and Iterates lists only its parameters. "" for the script's
	// own defs.
	Module string `json:"module,omitempty"`
}

// EnclosingFunction returns the innermost def containing line, or ok false
// at module level.
func (f *Facts) EnclosingFunction(line int) (fn Function, ok bool) {
	for _, c := range f.Functions {
		if c.Line <= line && line <= c.EndLine && (!ok || c.Line >= fn.Line) {
			fn, ok = c, true
		}
	}
	return fn, ok
}

// LineText returns line n (1-based) of the script without its newline,
// "" when out of range.
func (f *Facts) LineText(n int) string {
	if n < 1 {
		return ""
	}
	i := 0
	for l := 1; l < n; l++ {
		j := indexByte(f.Source[i:], '\n')
		if j < 0 {
			return ""
		}
		i += j + 1
	}
	rest := f.Source[i:]
	if j := indexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	if len(rest) > 0 && rest[len(rest)-1] == '\r' {
		rest = rest[:len(rest)-1]
	}
	return string(rest)
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
