import torch, json, sys
torch.backends.cuda.matmul.allow_tf32 = False
def t(f, n=20):
    for _ in range(3): f()
    torch.cuda.synchronize()
    ts=[]
    for _ in range(n):
        a=torch.cuda.Event(enable_timing=True); b=torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[len(ts)//2]
d='cuda'; r={}
x=torch.rand(10**8,device=d); y=torch.rand(10**8,device=d); z=torch.rand(10**8,device=d)
r['dot torch.dot']=t(lambda: torch.dot(x,y))
r['sum torch.sum']=t(lambda: torch.sum(x))
r['sumsq torch.dot(x,x)']=t(lambda: torch.dot(x,x))
r['zip3sum torch.dot(a,b)+torch.sum(c)']=t(lambda: torch.dot(x,y)+torch.sum(z))
r['zip3sum (a*b+c).sum()']=t(lambda: (x*y+z).sum())
del x,y,z
a=torch.rand(100000,1000,device=d)
r['rownorm torch.linalg.vector_norm(dim=1)']=t(lambda: torch.linalg.vector_norm(a,dim=1))
del a
A=torch.rand(10000,3000,device=d); v=torch.rand(3000,device=d); bb=torch.rand(10000,device=d)
r['gemv_bias torch.addmv']=t(lambda: torch.addmv(bb,A,v))
del A
g=torch.rand(8194,8194,device=d)
r['jacobi slices']=t(lambda: 0.2*(g[:-2,1:-1]+g[1:-1,:-2]+g[1:-1,1:-1]+g[1:-1,2:]+g[2:,1:-1]))
w=torch.tensor([[0,.2,0],[.2,.2,.2],[0,.2,0]],device=d).view(1,1,3,3)
gi=g.view(1,1,8194,8194)
r['jacobi conv2d']=t(lambda: torch.nn.functional.conv2d(gi,w))
del g,gi
A=torch.rand(4096,32,32,device=d); B=torch.rand(4096,32,32,device=d)
r['bmm torch.bmm']=t(lambda: torch.bmm(A,B))
print(json.dumps(r, indent=1))
